//! Files in and out of the page: offering bytes as a download, and reading the files a user
//! picks or drops.

use leptos::task::spawn_local;
use wasm_bindgen::JsCast;

/// Offers `bytes` as a file download.
pub fn download(name: &str, bytes: &[u8], mime: &str) {
    let Some(document) = web_sys::window().and_then(|w| w.document()) else { return };
    let parts = js_sys::Array::of1(&js_sys::Uint8Array::from(bytes));
    let options = web_sys::BlobPropertyBag::new();
    options.set_type(mime);
    let Ok(blob) = web_sys::Blob::new_with_u8_array_sequence_and_options(&parts, &options) else { return };
    let Ok(url) = web_sys::Url::create_object_url_with_blob(&blob) else { return };
    if let Ok(a) = document.create_element("a") {
        let a: web_sys::HtmlAnchorElement = a.unchecked_into();
        a.set_href(&url);
        a.set_download(name);
        a.click();
    }
    // Revoking at once can cancel the download; the blob is freed a minute later.
    spawn_local(async move {
        crate::fetch::sleep_ms(60_000).await;
        let _ = web_sys::Url::revoke_object_url(&url);
    });
}

/// A change handler for an `<input type=file>`: the chosen files are read and given to
/// `on_files` (names and bytes; none when nothing could be read), and the input is cleared so
/// the same file can be chosen again.
pub fn on_files(on_files: impl Fn(Vec<(String, Vec<u8>)>) + Copy + 'static) -> impl Fn(web_sys::Event) + Copy + 'static {
    move |ev: web_sys::Event| {
        let Some(input) = ev.target().and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok()) else { return };
        let Some(files) = input.files().map(|f| file_list(&f)) else { return };
        input.set_value("");
        spawn_local(async move { on_files(read_files(files).await) });
    }
}

/// The files of an `<input type=file>` or a drop, taken at once: the list is live, and clearing
/// the input (so the same file can be picked again) empties it.
pub fn file_list(list: &web_sys::FileList) -> Vec<web_sys::File> {
    (0..list.length()).filter_map(|i| list.get(i)).collect()
}

/// Reads files' bytes.
pub async fn read_files(files: Vec<web_sys::File>) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for file in files {
        if let Ok(buffer) = wasm_bindgen_futures::JsFuture::from(file.array_buffer()).await {
            out.push((file.name(), crate::js_bytes::take(&js_sys::Uint8Array::new(&buffer))));
        }
    }
    out
}
