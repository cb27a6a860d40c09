//! Windows Graphics Capture of one window: the window's own pixels as the compositor has them,
//! right when other windows cover it. One frame is taken and the session closed. Each call
//! creates its Direct3D device (tens of milliseconds), enters the multi-threaded apartment for
//! its own duration, and waits for the frame at most [`FRAME_WAIT`].

use crate::pixels::{bgra_rows_to_rgba, crop_rgba};
use lsm_core::geometry::Rect;
use lsm_core::RgbaImage;
use std::time::{Duration, Instant};
use windows::core::Interface;
use windows::Graphics::Capture::{Direct3D11CaptureFramePool, GraphicsCaptureItem, GraphicsCaptureSession};
use windows::Graphics::DirectX::Direct3D11::IDirect3DDevice;
use windows::Graphics::DirectX::DirectXPixelFormat;
use windows::Win32::Foundation::{HMODULE, HWND};
use windows::Win32::Graphics::Direct3D::D3D_DRIVER_TYPE_HARDWARE;
use windows::Win32::Graphics::Direct3D11::{
    D3D11CreateDevice, ID3D11Device, ID3D11Texture2D, D3D11_CPU_ACCESS_READ,
    D3D11_CREATE_DEVICE_BGRA_SUPPORT, D3D11_MAPPED_SUBRESOURCE, D3D11_MAP_READ, D3D11_SDK_VERSION,
    D3D11_TEXTURE2D_DESC, D3D11_USAGE_STAGING,
};
use windows::Win32::Graphics::Dxgi::IDXGIDevice;
use windows::Win32::System::Com::{CoInitializeEx, CoUninitialize, COINIT_MULTITHREADED};
use windows::Win32::System::WinRT::Direct3D11::{
    CreateDirect3D11DeviceFromDXGIDevice, IDirect3DDxgiInterfaceAccess,
};
use windows::Win32::System::WinRT::Graphics::Capture::IGraphicsCaptureItemInterop;

/// How long the first frame may take to arrive.
const FRAME_WAIT: Duration = Duration::from_millis(1_000);

/// The window's pixels in its frame (physical screen pixels). `Err`: why this path did not
/// work (not supported, no GPU device, no frame in time).
pub fn capture(hwnd: HWND, frame: Rect) -> Result<RgbaImage, String> {
    // SAFETY: balanced by the CoUninitialize below on every path (S_FALSE, already initialised,
    // counts too).
    let entered = unsafe { CoInitializeEx(None, COINIT_MULTITHREADED) }.is_ok();
    let result = capture_in_apartment(hwnd, frame);
    if entered {
        // SAFETY: pairs the successful CoInitializeEx above.
        unsafe { CoUninitialize() };
    }
    result
}

fn capture_in_apartment(hwnd: HWND, frame: Rect) -> Result<RgbaImage, String> {
    let err = |what: &str| {
        let what = what.to_string();
        move |e: windows::core::Error| format!("{what}: {e}")
    };
    if !GraphicsCaptureSession::IsSupported().unwrap_or(false) {
        return Err("not supported on this Windows".into());
    }
    let device = d3d_device()?;
    // SAFETY: COM calls on live objects; every out pointer is a local.
    unsafe {
        let dxgi: IDXGIDevice = device.cast().map_err(err("the DXGI device"))?;
        let winrt_device: IDirect3DDevice = CreateDirect3D11DeviceFromDXGIDevice(&dxgi)
            .and_then(|d| d.cast())
            .map_err(err("the WinRT device"))?;
        let interop = windows::core::factory::<GraphicsCaptureItem, IGraphicsCaptureItemInterop>()
            .map_err(err("the capture item factory"))?;
        let item: GraphicsCaptureItem = interop
            .CreateForWindow(hwnd)
            .map_err(err("a capture item for the window"))?;
        let size = item.Size().map_err(err("the item's size"))?;
        let pool = Direct3D11CaptureFramePool::CreateFreeThreaded(
            &winrt_device,
            DirectXPixelFormat::B8G8R8A8UIntNormalized,
            1,
            size,
        )
        .map_err(err("the frame pool"))?;
        let session = pool
            .CreateCaptureSession(&item)
            .map_err(err("the capture session"))?;
        // Windows 11: no yellow border, no cursor. Older systems refuse these; fine.
        let _ = session.SetIsBorderRequired(false);
        let _ = session.SetIsCursorCaptureEnabled(false);
        session.StartCapture().map_err(err("starting the capture"))?;
        let started = Instant::now();
        let captured = loop {
            if let Ok(f) = pool.TryGetNextFrame() {
                break Ok(f);
            }
            if started.elapsed() >= FRAME_WAIT {
                break Err(format!("no frame within {} ms", FRAME_WAIT.as_millis()));
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        let image = captured.and_then(|f| {
            let pixels = frame_pixels(&device, &f);
            let _ = f.Close();
            pixels
        });
        let _ = session.Close();
        let _ = pool.Close();
        let (width, height, rgba) = image?;
        // The item covers the window's visible bounds; cut the frame out of it (they agree to
        // the pixel on current systems, this keeps the image the frame's size when not).
        let part = Rect::new(0, 0, frame.width, frame.height);
        let cut = crop_rgba(&rgba, width, height, part).ok_or_else(|| {
            format!(
                "the frame was {width}x{height}, the window {}x{}",
                frame.width, frame.height
            )
        })?;
        RgbaImage::new(frame.width as u32, frame.height as u32, cut).map_err(|e| e.message)
    }
}

fn d3d_device() -> Result<ID3D11Device, String> {
    let mut device = None;
    // SAFETY: out pointers are locals.
    unsafe {
        D3D11CreateDevice(
            None,
            D3D_DRIVER_TYPE_HARDWARE,
            HMODULE::default(),
            D3D11_CREATE_DEVICE_BGRA_SUPPORT,
            None,
            D3D11_SDK_VERSION,
            Some(&mut device),
            None,
            None,
        )
    }
    .map_err(|e| format!("no Direct3D 11 device: {e}"))?;
    device.ok_or_else(|| "no Direct3D 11 device".into())
}

/// The frame's texture copied to the CPU: width, height and RGBA pixels.
fn frame_pixels(
    device: &ID3D11Device,
    frame: &windows::Graphics::Capture::Direct3D11CaptureFrame,
) -> Result<(usize, usize, Vec<u8>), String> {
    let err = |what: &'static str| move |e: windows::core::Error| format!("{what}: {e}");
    // SAFETY: COM calls on live objects; the mapped memory is read within its row pitch and
    // unmapped before the texture is dropped.
    unsafe {
        let surface = frame.Surface().map_err(err("the frame's surface"))?;
        let access: IDirect3DDxgiInterfaceAccess =
            surface.cast().map_err(err("the surface's DXGI access"))?;
        let texture: ID3D11Texture2D = access.GetInterface().map_err(err("the frame's texture"))?;
        let mut desc = D3D11_TEXTURE2D_DESC::default();
        texture.GetDesc(&mut desc);
        desc.Usage = D3D11_USAGE_STAGING;
        desc.BindFlags = 0;
        desc.CPUAccessFlags = D3D11_CPU_ACCESS_READ.0 as u32;
        desc.MiscFlags = 0;
        let mut staging = None;
        device
            .CreateTexture2D(&desc, None, Some(&mut staging))
            .map_err(err("a staging texture"))?;
        let staging = staging.ok_or("no staging texture")?;
        let context = device.GetImmediateContext().map_err(err("the device context"))?;
        context.CopyResource(&staging, &texture);
        let mut mapped = D3D11_MAPPED_SUBRESOURCE::default();
        context
            .Map(&staging, 0, D3D11_MAP_READ, 0, Some(&mut mapped))
            .map_err(err("mapping the texture"))?;
        let (w, h, pitch) = (
            desc.Width as usize,
            desc.Height as usize,
            mapped.RowPitch as usize,
        );
        let bytes = if mapped.pData.is_null() || h == 0 {
            None
        } else {
            Some(std::slice::from_raw_parts(
                mapped.pData.cast::<u8>(),
                pitch * (h - 1) + w * 4,
            ))
        };
        let rgba = bytes.and_then(|b| bgra_rows_to_rgba(b, pitch, w, h));
        context.Unmap(&staging, 0);
        rgba.map(|px| (w, h, px))
            .ok_or_else(|| "the frame's pixels could not be read".into())
    }
}
