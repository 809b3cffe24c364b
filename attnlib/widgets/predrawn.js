// The browser half of attnlib.widgets.predrawn (read its docstring first).
//
// Keeps the frames a lab's kernel drew ahead of time (picture, caption and readouts, under the
// key of the control state they show) and, the moment the lab's controls reach one of those
// states, shows it without waiting for the kernel. While the controls stay there, the frame stays
// "pinned": a message from the kernel about an older state (it lags a drag by a round trip) is
// put back at once, before the page paints. A state with no frame here shows what the kernel
// sends, as without this module, and asks the kernel to draw it ("want").

/** A control's place in a state key, as predrawn.position writes it in Python. */
function position(control) {
  const labels = control.get("_options_labels");
  if (labels === undefined) return control.get("value");
  const index = control.get("index");
  if (Array.isArray(index)) return [index, index.map((i) => labels[i])];
  return [index, index === null || index === undefined ? null : labels[index]];
}

function initialize({ model }) {
  const frames = new Map(); // key -> {picture, caption, readouts}, oldest first
  let lab = null; // the lab's models, once the widget manager has them
  let shown = null; // the frame on screen while the controls stay on its state

  const keyNow = () => JSON.stringify(lab.controls.map(position));

  function pin() {
    if (shown === null) return;
    if (lab.picture.get("value") !== shown.picture) lab.picture.set("value", shown.picture);
    if (lab.caption.get("value") !== shown.caption) lab.caption.set("value", shown.caption);
    for (const [name, text] of Object.entries(shown.readouts)) {
      const readout = lab.readouts[name];
      if (readout !== undefined && readout.get("value") !== text) readout.set("value", text);
    }
  }

  function follow() {
    const key = keyNow();
    shown = frames.get(key) ?? null;
    if (shown === null) model.send({ type: "want", key });
    pin();
  }

  function keep(msg, buffers) {
    if (msg.type !== "frame") return;
    const frame = { picture: buffers[0], caption: msg.caption, readouts: msg.readouts };
    for (const key of msg.keys) {
      frames.delete(key); // a frame sent again counts as the newest
      frames.set(key, frame);
    }
    while (frames.size > model.get("capacity")) frames.delete(frames.keys().next().value);
    if (lab !== null && shown === null && msg.keys.includes(keyNow())) follow();
  }
  model.on("msg:custom", keep);

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
      control.on("change:value change:index change:_options_labels", follow);
    }
    for (const shows of [picture, caption, ...readouts]) shows.on("change:value", pin);
    model.send({ type: "hello" }); // the kernel (re)sends every frame it drew ahead
  });
}

export default { initialize };
