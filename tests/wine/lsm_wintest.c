/* lsm's Win32 test application, for the Windows backend's tests under Wine.
 *
 *   lsm_wintest.exe LOGFILE
 *
 * A window "lsm win test" at (100,100) with a button "Press me", an edit control, a label, a
 * check box "Remember me" and a password field. It records what it receives, one UTF-8 line
 * per event, in LOGFILE (flushed at once):
 *   ready WX WY WW WH BX BY BW BH EX EY EW EH CX CY CW CH PX PY PW PH FX FY FW FH
 *                                               the client area (screen), which is what Wine
 *                                               shows of a window whose frame the X11 window
 *                                               manager draws (and with no window manager
 *                                               nothing draws the frame); the button's, the
 *                                               edit's, the check box's and the password
 *                                               field's rects (relative to the client area's
 *                                               top-left); the Win32 window rect (screen)
 *   pressed N                                   the button was pressed (N-th time)
 *   text T                                      the edit's whole text after a change
 *   wheel D                                     a wheel turn over the window (D: +120 is up)
 *   down X Y / up X Y                           left button over the window's free area
 *                                               (client coordinates)
 *   modal X Y W H                               it opened the dialog "lsm win dialog" (client
 *                                               area on screen) owned by the window, and
 *                                               disabled the window (as DialogBox does), when
 *                                               LOGFILE.modal appeared
 *   dialog down X Y                             left button in that dialog
 *   cover X Y W H                               it opened a second top-level window "lsm win
 *                                               cover" over the button (client area on screen)
 *                                               when LOGFILE.cover appeared; always on top
 *                                               (HWND_TOPMOST) when the file says "topmost"
 *   cover down X Y                              left button in that window
 *   key C                                       a character the window itself got (WM_CHAR:
 *                                               it has the keyboard focus, no control has)
 *   dialog key K / cover key K                  a key (WM_KEYDOWN, WM_CHAR) in either window
 *   selectall                                   ctrl+a in the edit (Win32's edit has no ctrl+a)
 *   checked 0|1                                 the check box was clicked, its new state
 *   secret N                                    the password field holds N characters (never
 *                                               its text)
 *   moved WX WY                                 it moved itself by (40, 30): it does so when
 *                                               the file LOGFILE.move appears (then removes it)
 *   recreated                                   it replaced its button by a new one with the
 *                                               same caption when LOGFILE.recreate appeared
 */
#include <windows.h>
#include <stdio.h>
#include <string.h>

static FILE *logf;
static HWND button, edit, label, check, secret;
static int presses;
static wchar_t move_flag[MAX_PATH], recreate_flag[MAX_PATH], modal_flag[MAX_PATH], cover_flag[MAX_PATH];
static HINSTANCE instance;

static HWND make_button(HWND parent)
{
    return CreateWindowExW(0, L"BUTTON", L"Press me", WS_CHILD | WS_VISIBLE | WS_TABSTOP | BS_PUSHBUTTON, 20, 20,
                           140, 36, parent, NULL, instance, NULL);
}

static void log_line(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfprintf(logf, fmt, ap);
    va_end(ap);
    fputc('\n', logf);
    fflush(logf);
}

/* The client area on screen: x, y, width, height. */
static void client_on_screen(HWND window, RECT *out)
{
    POINT o = {0, 0};
    RECT c;
    ClientToScreen(window, &o);
    GetClientRect(window, &c);
    out->left = o.x;
    out->top = o.y;
    out->right = c.right;
    out->bottom = c.bottom;
}

static void rect_in_window(HWND window, HWND child, RECT *out)
{
    RECT w, c;
    client_on_screen(window, &w);
    GetWindowRect(child, &c);
    out->left = c.left - w.left;
    out->top = c.top - w.top;
    out->right = c.right - c.left;
    out->bottom = c.bottom - c.top;
}

static void client_point(LPARAM lp, int *x, int *y)
{
    *x = (short)LOWORD(lp);
    *y = (short)HIWORD(lp);
}

/* The dialog and the covering window log the clicks they get. */
static LRESULT CALLBACK other_proc(HWND hwnd, UINT msg, WPARAM wp, LPARAM lp)
{
    wchar_t cls[32];
    int x, y;
    if (msg == WM_LBUTTONDOWN) {
        GetClassNameW(hwnd, cls, 32);
        client_point(lp, &x, &y);
        log_line("%s down %d %d", lstrcmpW(cls, L"LsmWinDialog") == 0 ? "dialog" : "cover", x, y);
        return 0;
    }
    if (msg == WM_KEYDOWN || msg == WM_CHAR) {
        GetClassNameW(hwnd, cls, 32);
        log_line("%s key %u", lstrcmpW(cls, L"LsmWinDialog") == 0 ? "dialog" : "cover", (unsigned)wp);
        return 0;
    }
    return DefWindowProcW(hwnd, msg, wp, lp);
}

static void open_modal(HWND owner)
{
    RECT c, d;
    HWND dialog;
    client_on_screen(owner, &c);
    /* Right of and below the button, so the button stays in sight. */
    dialog = CreateWindowExW(WS_EX_DLGMODALFRAME, L"LsmWinDialog", L"lsm win dialog",
                             WS_POPUP | WS_CAPTION | WS_SYSMENU, c.left + 190, c.top + 110, 240, 120, owner, NULL,
                             instance, NULL);
    EnableWindow(owner, FALSE);
    ShowWindow(dialog, SW_SHOW);
    UpdateWindow(dialog);
    client_on_screen(dialog, &d);
    log_line("modal %ld %ld %ld %ld", d.left, d.top, d.right, d.bottom);
}

static void open_cover(HWND below, BOOL topmost)
{
    RECT c, d;
    HWND cover;
    client_on_screen(below, &c);
    /* Over the button (20,20 140x36 in the client area). */
    cover = CreateWindowExW(topmost ? WS_EX_TOPMOST : 0, L"LsmWinCover", L"lsm win cover", WS_OVERLAPPEDWINDOW,
                            c.left - 10, c.top - 10, 260, 140, NULL, NULL, instance, NULL);
    ShowWindow(cover, SW_SHOW);
    UpdateWindow(cover);
    client_on_screen(cover, &d);
    log_line("cover %ld %ld %ld %ld", d.left, d.top, d.right, d.bottom);
}

static LRESULT CALLBACK proc(HWND hwnd, UINT msg, WPARAM wp, LPARAM lp)
{
    int x, y;
    switch (msg) {
    case WM_COMMAND:
        if ((HWND)lp == button && HIWORD(wp) == BN_CLICKED) {
            wchar_t text[64];
            presses++;
            swprintf(text, 64, L"Pressed: %d", presses);
            SetWindowTextW(label, text);
            log_line("pressed %d", presses);
        } else if ((HWND)lp == edit && HIWORD(wp) == EN_CHANGE) {
            wchar_t wide[4096];
            char utf8[16384];
            GetWindowTextW(edit, wide, 4096);
            WideCharToMultiByte(CP_UTF8, 0, wide, -1, utf8, sizeof utf8, NULL, NULL);
            log_line("text %s", utf8);
        } else if ((HWND)lp == check && HIWORD(wp) == BN_CLICKED) {
            log_line("checked %d", SendMessageW(check, BM_GETCHECK, 0, 0) == BST_CHECKED ? 1 : 0);
        } else if ((HWND)lp == secret && HIWORD(wp) == EN_CHANGE) {
            log_line("secret %d", GetWindowTextLengthW(secret));
        }
        return 0;
    case WM_TIMER:
        if (GetFileAttributesW(move_flag) != INVALID_FILE_ATTRIBUTES) {
            RECT r;
            DeleteFileW(move_flag);
            GetWindowRect(hwnd, &r);
            SetWindowPos(hwnd, NULL, r.left + 40, r.top + 30, 0, 0, SWP_NOSIZE | SWP_NOZORDER);
            GetWindowRect(hwnd, &r);
            log_line("moved %ld %ld", r.left, r.top);
        }
        if (GetFileAttributesW(modal_flag) != INVALID_FILE_ATTRIBUTES) {
            DeleteFileW(modal_flag);
            open_modal(hwnd);
        }
        if (GetFileAttributesW(cover_flag) != INVALID_FILE_ATTRIBUTES) {
            char word[16] = {0};
            FILE *f = _wfopen(cover_flag, L"rb");
            if (f) {
                fread(word, 1, sizeof word - 1, f);
                fclose(f);
            }
            DeleteFileW(cover_flag);
            open_cover(hwnd, strncmp(word, "topmost", 7) == 0);
        }
        if (GetFileAttributesW(recreate_flag) != INVALID_FILE_ATTRIBUTES) {
            DeleteFileW(recreate_flag);
            DestroyWindow(button);
            button = make_button(hwnd);
            log_line("recreated");
        }
        return 0;
    case WM_CHAR:
        log_line("key %u", (unsigned)wp);
        return 0;
    case WM_MOUSEWHEEL:
        log_line("wheel %d", (short)HIWORD(wp));
        return 0;
    case WM_LBUTTONDOWN:
        client_point(lp, &x, &y);
        log_line("down %d %d", x, y);
        return 0;
    case WM_LBUTTONUP:
        client_point(lp, &x, &y);
        log_line("up %d %d", x, y);
        return 0;
    case WM_DESTROY:
        PostQuitMessage(0);
        return 0;
    }
    return DefWindowProcW(hwnd, msg, wp, lp);
}

int WINAPI wWinMain(HINSTANCE inst, HINSTANCE prev, PWSTR cmd, int show)
{
    int argc;
    wchar_t **argv = CommandLineToArgvW(GetCommandLineW(), &argc);
    WNDCLASSW wc = {0};
    HWND hwnd;
    MSG m;
    RECT w, b, e, c, p, f;
    (void)prev;
    (void)cmd;
    if (argc < 2 || !(logf = _wfopen(argv[1], L"ab")))
        return 2;
    swprintf(move_flag, MAX_PATH, L"%ls.move", argv[1]);
    swprintf(recreate_flag, MAX_PATH, L"%ls.recreate", argv[1]);
    swprintf(modal_flag, MAX_PATH, L"%ls.modal", argv[1]);
    swprintf(cover_flag, MAX_PATH, L"%ls.cover", argv[1]);
    instance = inst;
    wc.lpfnWndProc = proc;
    wc.hInstance = inst;
    wc.hCursor = LoadCursor(NULL, IDC_ARROW);
    wc.hbrBackground = (HBRUSH)(COLOR_WINDOW + 1);
    wc.lpszClassName = L"LsmWinTest";
    RegisterClassW(&wc);
    wc.lpfnWndProc = other_proc;
    wc.lpszClassName = L"LsmWinDialog";
    RegisterClassW(&wc);
    wc.lpszClassName = L"LsmWinCover";
    wc.hbrBackground = (HBRUSH)(COLOR_BTNSHADOW + 1);
    RegisterClassW(&wc);
    hwnd = CreateWindowExW(0, L"LsmWinTest", L"lsm win test", WS_OVERLAPPEDWINDOW, 100, 100, 420, 260,
                           NULL, NULL, inst, NULL);
    button = make_button(hwnd);
    edit = CreateWindowExW(WS_EX_CLIENTEDGE, L"EDIT", L"", WS_CHILD | WS_VISIBLE | ES_AUTOHSCROLL, 20, 80, 360,
                           28, hwnd, NULL, inst, NULL);
    label = CreateWindowExW(0, L"STATIC", L"Pressed: 0", WS_CHILD | WS_VISIBLE, 200, 28, 160, 24, hwnd, NULL,
                            inst, NULL);
    /* Below the free area the tests scroll and drag in. */
    check = CreateWindowExW(0, L"BUTTON", L"Remember me", WS_CHILD | WS_VISIBLE | WS_TABSTOP | BS_AUTOCHECKBOX, 20,
                            185, 150, 24, hwnd, NULL, inst, NULL);
    secret = CreateWindowExW(WS_EX_CLIENTEDGE, L"EDIT", L"", WS_CHILD | WS_VISIBLE | ES_AUTOHSCROLL | ES_PASSWORD,
                             200, 185, 180, 26, hwnd, NULL, inst, NULL);
    ShowWindow(hwnd, show);
    UpdateWindow(hwnd);
    client_on_screen(hwnd, &w);
    GetWindowRect(hwnd, &f);
    rect_in_window(hwnd, button, &b);
    rect_in_window(hwnd, edit, &e);
    rect_in_window(hwnd, check, &c);
    rect_in_window(hwnd, secret, &p);
    log_line("ready %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld",
             w.left, w.top, w.right, w.bottom, b.left, b.top, b.right, b.bottom, e.left, e.top, e.right, e.bottom,
             c.left, c.top, c.right, c.bottom, p.left, p.top, p.right, p.bottom, f.left, f.top, f.right - f.left,
             f.bottom - f.top);
    SetTimer(hwnd, 1, 100, NULL);
    while (GetMessageW(&m, NULL, 0, 0) > 0) {
        if (m.message == WM_KEYDOWN && m.hwnd == edit && m.wParam == 'A' && (GetKeyState(VK_CONTROL) & 0x8000)) {
            SendMessageW(edit, EM_SETSEL, 0, -1);
            log_line("selectall");
            continue;
        }
        TranslateMessage(&m);
        DispatchMessageW(&m);
    }
    return 0;
}
