/* Wine 8.0 has no bcryptprimitives.dll, whose ProcessPrng Rust's std calls for random bytes
 * (HashMap seeds) before main: without it a Rust exe does not start. This stand-in, built with
 * MinGW and put beside the exe, answers from RtlGenRandom (advapi32's SystemFunction036). */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
    while (length > 0) {
        ULONG chunk = length > 0x40000000 ? 0x40000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk))
            return FALSE;
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
