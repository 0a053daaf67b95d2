//! "Open your own model": a Hugging Face model folder from the disk (picked, dropped, or as a
//! `.zip`) becomes the page's model for every tab and is kept in this browser, so it opens again
//! after a reload with no network. The folder is read by core (`bert::folder`): any supported
//! family and format, or a message that names what is wrong; the model in use stays meanwhile.

use bertbench_core::bert::checkpoint::{CheckpointFiles, Head};
use bertbench_core::bert::folder;
use leptos::prelude::*;
use leptos::task::spawn_local;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

use crate::app::{AppState, LastModel, LoadState, check_fits, open_model};
use crate::files::file_list;
use crate::saved_work::SavedWork;
use crate::studio::Studio;
use crate::store::{self, Item, Kind};

/// The buttons and the drop target for a model folder, with what happened last.
#[component]
pub fn OpenModel() -> impl IntoView {
    let state = expect_context::<AppState>();
    let saved = expect_context::<SavedWork>();
    let studio = expect_context::<Studio>();
    let note = RwSignal::new(None::<Result<String, String>>);
    let dragging = RwSignal::new(false);
    let busy = move || state.busy.get() || matches!(state.load.get(), LoadState::Starting | LoadState::Downloading { .. } | LoadState::Building(_));
    let picked = move |ev: leptos::ev::Event| {
        let input: web_sys::HtmlInputElement = event_target(&ev);
        let files = input.files().map(|l| file_list(&l)).unwrap_or_default();
        input.set_value("");
        // The last pick's message goes at once: what shows next is about this pick.
        note.set(None);
        spawn_local(async move {
            let files = with_paths(files).await;
            open_picked(state, saved, studio, note, files).await;
        });
    };
    let dropped = move |ev: leptos::ev::DragEvent| {
        ev.prevent_default();
        dragging.set(false);
        note.set(None);
        let Some(transfer) = ev.data_transfer() else { return };
        // Entries must be taken before the event returns; their contents are read after.
        let items = transfer.items();
        let entries: Vec<web_sys::FileSystemEntry> =
            (0..items.length()).filter_map(|i| items.get(i)).filter_map(|item| item.webkit_get_as_entry().ok().flatten()).collect();
        let loose = transfer.files().map(|l| file_list(&l)).unwrap_or_default();
        spawn_local(async move {
            let files = if entries.is_empty() { with_paths(loose).await } else { read_entries(entries).await };
            match files {
                Ok(files) => open_picked(state, saved, studio, note, Ok(files)).await,
                Err(e) => note.set(Some(Err(e))),
            }
        });
    };
    // `webkitdirectory` (pick a folder) is not an attribute the view macro knows.
    let folder_input = NodeRef::<leptos::html::Input>::new();
    Effect::new(move |_| {
        if let Some(input) = folder_input.get() {
            let _ = input.set_attribute("webkitdirectory", "");
        }
    });
    view! {
        <div class=move || if dragging.get() { "open-model dragging" } else { "open-model" } data-testid="open-model"
            on:dragover=move |ev: leptos::ev::DragEvent| { ev.prevent_default(); dragging.set(true); }
            on:dragleave=move |_| dragging.set(false)
            on:drop=dropped>
            <p class="small">
                <b>"Your own model: "</b>
                "drop a Hugging Face model folder here (or its files, or a .zip), or "
                <label class="linkish">"pick a folder"
                    <input type="file" node_ref=folder_input multiple=true hidden=true data-testid="open-model-folder"
                        prop:disabled=busy on:change=picked />
                </label>
                " · "
                <label class="linkish">"pick files or a .zip"
                    <input type="file" multiple=true hidden=true data-testid="open-model-files"
                        prop:disabled=busy on:change=picked />
                </label>
                ". BERT (any size), RoBERTa, XLM-RoBERTa, CamemBERT, DistilBERT, ELECTRA, ALBERT, MPNet, ModernBERT and DeBERTa-v2/v3; model.safetensors (sharded or not) or pytorch_model.bin. "
                "It is read here and kept in this browser: nothing is uploaded."
            </p>
            {move || note.get().map(|n| match n {
                Ok(m) => view! { <p class="banner ok small" data-testid="open-model-note">{m}</p> }.into_any(),
                Err(m) => view! { <p class="banner err small" data-testid="open-model-error">{m}</p> }.into_any(),
            })}
        </div>
    }
}

/// The files of a pick, each named by its path under the picked folder (`webkitRelativePath`)
/// or by its name.
async fn with_paths(files: Vec<web_sys::File>) -> Result<Vec<(String, Vec<u8>)>, String> {
    let mut out = Vec::with_capacity(files.len());
    for file in files {
        // `webkitRelativePath` (not in web-sys): the path under a picked folder, "" otherwise.
        let relative = js_sys::Reflect::get(&file, &"webkitRelativePath".into()).ok().and_then(|v| v.as_string());
        let path = relative.filter(|p| !p.is_empty()).unwrap_or_else(|| file.name());
        out.push((path, read(&file).await?));
    }
    Ok(out)
}

async fn read(file: &web_sys::File) -> Result<Vec<u8>, String> {
    let buffer = JsFuture::from(file.array_buffer()).await.map_err(|e| format!("{} could not be read: {e:?}", file.name()))?;
    Ok(crate::js_bytes::take(&js_sys::Uint8Array::new(&buffer)))
}

/// The files under dropped entries (folders walked), named by their path from the drop.
async fn read_entries(entries: Vec<web_sys::FileSystemEntry>) -> Result<Vec<(String, Vec<u8>)>, String> {
    let mut out = Vec::new();
    let mut stack = entries;
    while let Some(entry) = stack.pop() {
        let path = entry.full_path().trim_start_matches('/').to_string();
        if entry.is_directory() {
            let reader = entry.unchecked_into::<web_sys::FileSystemDirectoryEntry>().create_reader();
            // `readEntries` gives a folder's entries in batches until an empty one.
            loop {
                let batch = JsFuture::from(js_sys::Promise::new(&mut |resolve, reject| {
                    let _ = reader.read_entries_with_callback_and_callback(&resolve, &reject);
                }))
                .await
                .map_err(|e| format!("{path} could not be read: {e:?}"))?;
                let batch: js_sys::Array = batch.unchecked_into();
                if batch.length() == 0 {
                    break;
                }
                stack.extend(batch.iter().map(|e| e.unchecked_into::<web_sys::FileSystemEntry>()));
            }
        } else {
            let file_entry = entry.unchecked_into::<web_sys::FileSystemFileEntry>();
            let file = JsFuture::from(js_sys::Promise::new(&mut |resolve, reject| {
                file_entry.file_with_callback_and_callback(&resolve, &reject);
            }))
            .await
            .map_err(|e| format!("{path} could not be read: {e:?}"))?;
            out.push((path, read(&file.unchecked_into()).await?));
        }
    }
    Ok(out)
}

/// Reads the picked files as a model folder, keeps it in this browser and makes it the page's
/// model.
async fn open_picked(state: AppState, saved: SavedWork, studio: Studio, note: RwSignal<Option<Result<String, String>>>, files: Result<Vec<(String, Vec<u8>)>, String>) {
    note.set(None);
    let outcome = async {
        let mut files = files?;
        if files.is_empty() {
            return Err("nothing was picked".to_string());
        }
        let mut fallback = None;
        if files.len() == 1 && files[0].0.to_lowercase().ends_with(".zip") {
            let (name, zip) = files.remove(0);
            files = folder::unzip(&zip).map_err(|e| format!("{name}: {e}"))?;
            fallback = Some(name[..name.len() - 4].to_string());
        }
        let name = model_name(&files, fallback);
        let checkpoint = folder::from_folder(files).map_err(|e| format!("{name} could not be opened: {e}"))?;
        // A family or configuration the page cannot run is refused before anything is kept.
        bertbench_core::BertConfig::from_json_bytes(&checkpoint.config_json).map_err(|e| format!("{name} could not be opened: {e}"))?;
        check_fits(&checkpoint).map_err(|e| format!("{name} could not be opened: {e}"))?;
        let kept = keep(&name, &checkpoint).await;
        let id = kept.as_ref().ok().cloned();
        if let Err(e) = open_model(state, &name, checkpoint).await {
            if let Some(id) = id {
                let _ = store::delete(&id).await;
            }
            return Err(format!("{name} could not be opened: {e}"));
        }
        follow_its_head(state, studio, &name);
        if kept.is_ok() {
            LastModel::Yours(name.clone()).remember();
        }
        saved.refresh();
        Ok(match kept {
            Ok(_) => format!("Opened {name}; it is kept in this browser (see “Saved in this browser”)."),
            Err(e) => format!("Opened {name}, but it could not be kept in this browser: {e}"),
        })
    }
    .await;
    note.set(Some(outcome));
}

/// The model's name: the folder it came in, else the zip's name, else the `_name_or_path` its
/// `config.json` records, else "my model".
fn model_name(files: &[(String, Vec<u8>)], zip: Option<String>) -> String {
    let config = files.iter().filter(|(p, _)| p.ends_with("config.json")).min_by_key(|(p, _)| p.matches('/').count());
    let folder = config.and_then(|(p, _)| p.rsplit('/').nth(1).map(String::from));
    let recorded = || {
        let value: serde_json::Value = serde_json::from_slice(&config?.1).ok()?;
        value.get("_name_or_path")?.as_str()?.rsplit('/').next().map(String::from)
    };
    [folder, zip, recorded()].into_iter().flatten().find(|n| !n.trim().is_empty()).unwrap_or_else(|| "my model".to_string())
}

/// Saves a model's files in this browser; the item's id.
async fn keep(name: &str, files: &CheckpointFiles) -> Result<String, String> {
    let parts: [&[u8]; 4] = [
        &files.config_json,
        &files.weights,
        files.tokenizer_json.as_deref().unwrap_or_default(),
        files.vocab_txt.as_deref().unwrap_or_default(),
    ];
    let item = Item {
        id: format!("model:{name}"),
        kind: Kind::Model,
        name: name.to_string(),
        saved_ms: js_sys::Date::now(),
        size: parts.iter().map(|p| p.len() as u64).sum(),
        json: String::new(),
    };
    store::put(&item, &parts).await?;
    Ok(item.id)
}

/// Opens a model kept by [`keep`].
pub async fn open_kept(state: AppState, studio: Studio, item: &Item) -> Result<(), String> {
    let mut parts = store::bytes(&item.id).await?.into_iter();
    let (Some(config_json), Some(weights), tokenizer, vocab) = (parts.next(), parts.next(), parts.next(), parts.next()) else {
        return Err(format!("“{}” is incomplete in this browser's storage", item.name));
    };
    let some = |b: Option<Vec<u8>>| b.filter(|b| !b.is_empty());
    let files = CheckpointFiles { config_json, weights, tokenizer_json: some(tokenizer), vocab_txt: some(vocab) };
    open_model(state, &item.name, files).await?;
    follow_its_head(state, studio, &item.name);
    Ok(())
}

/// The studio's classifier follows the page's model, just opened or chosen (`name`): a model
/// that carries a task head (a fine-tuned classifier, tagger or question-answering model from
/// the Hub) becomes the studio's model too, so it predicts at once; one without leaves the
/// studio with none, never with the model before's.
pub(crate) fn follow_its_head(state: AppState, studio: Studio, name: &str) {
    let Some(engine) = state.engine().filter(|e| e.model_id == name) else { return };
    let heads = &engine.bert.report.heads;
    if ![Head::Classifier, Head::TokenClassifier, Head::QuestionAnswering].iter().any(|h| heads.contains(h)) {
        studio.follow_model(name.to_string(), Ok(None));
        return;
    }
    // A head whose files cannot be written is not a model without one: the studio says why.
    studio.follow_model(name.to_string(), engine.files().map(Some));
}
