// The browser half of attnlib.liveview.frames (read its docstring first).
//
// Keeps the frames a lab's kernel sends, each under the key of the control state it shows, and
// shows one (picture, caption, readouts, alt text) only when its key is the key of the controls'
// current state. Nothing else writes those widgets once this module runs.

/** A control's place in a state key, as attnlib.liveview.keys.position writes it in Python. */
function position(control) {
  const labels = control.get("_options_labels");
  if (labels === undefined) return control.get("value");
  const index = control.get("index");
  if (Array.isArray(index)) return [index, index.map((i) => labels[i])];
  return [index, index === null || index === undefined ? null : labels[index]];
}

/** Keys that move a control and would also move a slide deck (reveal.js) or scroll the page. */
const CONTROL_KEYS = new Set([
  "ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown", " ", "PageUp", "PageDown", "Home", "End",
]);

/** The text of an HTML fragment (parsed inert: no script runs, nothing loads). */
function plainText(html) {
  const body = new DOMParser().parseFromString(html ?? "", "text/html").body;
  return body.textContent.replace(/\s+/g, " ").trim();
}

/** The views of a widget model on this page (ipywidgets keeps them as promises). */
function views(model) {
  return Promise.all(Object.values(model.views ?? {}));
}

function initialize({ model }) {
  const frames = new Map(); // key -> {picture, caption, readouts, alt}
  let lab = null; // the lab's models, once the widget manager has them
  let shownKey = null;
  let alt = "";

  const keyNow = () => JSON.stringify(lab.controls.map(position));

  // Accessible names, alt text and keys kept from the page, for every view of the lab's controls
  // and picture on the page: dressed when a frame is shown and whenever views are added (a
  // MutationObserver below), so that a view rendered later (another output of the lab, a slider
  // re-rendered) is named from its first paint. Before the first frame, the picture's alt text
  // is the caption the kernel gave.
  function dress() {
    for (const control of lab.controls) {
      views(control).then((shown) => {
        for (const view of shown) {
          for (const handle of view.el.querySelectorAll(".noUi-handle")) {
            handle.setAttribute("aria-label", control.get("description"));
          }
          if (!view.el.__attnlibKeys) {
            view.el.__attnlibKeys = true;
            view.el.addEventListener("keydown", (e) => {
              if (CONTROL_KEYS.has(e.key)) e.stopPropagation();
            });
          }
        }
      });
    }
    const text = alt || plainText(lab.caption.get("value"));
    views(lab.picture).then((shown) => shown.forEach((view) => view.el.setAttribute("alt", text)));
  }

  let dressing = false; // a dress() is due on the next animation frame
  const observer = new MutationObserver(() => {
    if (lab === null || dressing) return;
    dressing = true;
    requestAnimationFrame(() => {
      dressing = false;
      dress();
    });
  });

  function show() {
    const key = keyNow();
    const frame = frames.get(key);
    if (frame === undefined || key === shownKey) return; // the kernel is drawing it
    shownKey = key;
    // Caption and readouts before the picture: a Label view writes its text in a microtask
    // (ipywidgets' typeset), so set after the picture it would still show the previous state's
    // text to whatever watches the picture change (a MutationObserver, the latency benchmark).
    lab.caption.set("value", frame.caption);
    for (const [name, text] of Object.entries(frame.readouts)) {
      const readout = lab.readouts[name];
      if (readout !== undefined) readout.set("value", text);
    }
    lab.picture.set("value", frame.picture);
    alt = frame.alt;
    dress();
  }

  model.on("msg:custom", (msg, buffers) => {
    if (msg.type !== "frame") return;
    for (const key of msg.drop) frames.delete(key);
    const frame = { picture: buffers[0], caption: msg.caption, readouts: msg.readouts, alt: msg.alt };
    for (const key of msg.keys) frames.set(key, frame);
    if (lab !== null && msg.keys.includes(keyNow())) {
      shownKey = null; // the state's frame may be new (sent again after a hello)
      show();
    }
  });

  const manager = model.widget_manager;
  const names = Object.keys(model.get("readouts"));
  Promise.all([
    Promise.all(model.get("controls").map((id) => manager.get_model(id))),
    manager.get_model(model.get("picture")),
    manager.get_model(model.get("caption")),
    Promise.all(names.map((name) => manager.get_model(model.get("readouts")[name]))),
  ]).then(([controls, picture, caption, readouts]) => {
    lab = { controls, picture, caption, readouts: {} };
    names.forEach((name, i) => (lab.readouts[name] = readouts[i]));
    for (const control of controls) {
      control.on("change:value change:index change:_options_labels", show);
    }
    model.send({ type: "hello" }); // the kernel sends every frame again, the current one first
    dress();
    observer.observe(document.body, { childList: true, subtree: true });
  });
}

export default { initialize };
