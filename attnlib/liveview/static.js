// The browser half of attnlib.liveview.static (read its docstring first).
//
// Turns every `.attnlib-static-lab` on the page into a lab without a kernel: its controls (the
// live lab's, by kind, description and options) above its caption and picture. The page carries
// the first state's manifest (a `script.attnlib-static-first`); the whole manifest
// (`data-manifest`) and the pictures one move away are fetched once the reader touches the lab.
// A move looks up the state reached (by its key, as the kernel writes it) and shows the picture
// the lab drew for that state when the page was built.

let made = 0; // the forms made on this page, for unique element ids

/** An element with attributes and children. */
function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  node.append(...children);
  return node;
}

function start(root) {
  const address = new URL(root.dataset.manifest, document.baseURI);
  let m = JSON.parse(root.querySelector("script.attnlib-static-first").textContent);
  let whole = null; // the promise of the whole manifest, once asked for
  const id = `attnlib-static-${(made += 1)}`;
  const picture = root.querySelector("img");
  const caption = root.querySelector(".attnlib-static-caption");
  const error = root.querySelector(".attnlib-static-error");
  const box = root.querySelector(".attnlib-static-controls");
  const rows = m.controls.map(() => null); // per control: its row and its options (JSON)
  const fetched = new Set();

  // a state by its key (or the key before sync_controls moved another control), as an object
  // of the fields of attnlib.liveview.static.STATE_FIELDS; undefined if not stored
  function stateOf(key) {
    const row = m.states[key] ?? m.states[m.aliases[key]];
    return row && Object.fromEntries(m.fields.map((field, i) => [field, row[i]]));
  }
  let key = m.first;
  let state = stateOf(key);

  const url = (s) => new URL(`${m.folder}/${m.pictures[s.picture]}.${m.format}`, address).href;

  /** The key of the state one move away: control c to its option j. */
  function keyAfter(c, j) {
    const places = state.options.map((list, i) => m.options[list][i === c ? j : state.at[i]][0]);
    return `[${places.join(",")}]`;
  }

  /** The whole manifest, fetched once; the state shown is looked up in it again. */
  function load() {
    whole ??= fetch(address)
      .then((response) => {
        if (!response.ok) throw new Error(`${response.status} ${response.statusText}`);
        return response.json();
      })
      .then((manifest) => {
        m = manifest;
        state = stateOf(key);
      })
      .catch((reason) => {
        whole = null; // the next touch tries again
        error.textContent = `The lab's other states could not be loaded (${reason.message}).`;
      });
    return whole;
  }

  function move(c, j) {
    const next = keyAfter(c, j);
    load().then(() => {
      const reached = stateOf(next);
      if (reached !== undefined) show(m.aliases[next] ?? next, reached);
    });
  }

  /** The elements of control c's row for the options of the state shown (no position yet). */
  function row(c) {
    const control = m.controls[c];
    const options = m.options[state.options[c]];
    const name = `${id}-${c}`;
    if (control.kind === "slider") {
      const input = el("input", { type: "range", id: name, min: 0, max: options.length - 1 });
      input.addEventListener("input", () => move(c, Number(input.value)));
      return [el("label", { for: name }, control.description), input, el("output", { for: name })];
    }
    if (control.kind === "checkbox") {
      const input = el("input", { type: "checkbox", id: name });
      input.addEventListener("change", () =>
        move(c, options.findIndex((option) => option[1] === (input.checked ? "on" : "off"))),
      );
      return [el("span"), el("label", {}, input, ` ${control.description}`), el("span")];
    }
    if (control.kind === "buttons") {
      const legend = el("legend", {}, control.description);
      const group = el("fieldset", { class: "attnlib-static-buttons" }, legend);
      options.forEach(([, label], j) => {
        const input = el("input", { type: "radio", name, value: j });
        input.addEventListener("change", () => move(c, j));
        group.append(el("label", {}, input, label));
      });
      return [el("span", { "aria-hidden": "true" }, control.description), group, el("span")];
    }
    const select = el("select", { id: name });
    options.forEach(([, label], j) => select.append(el("option", { value: j }, label)));
    select.addEventListener("change", () => move(c, Number(select.value)));
    return [el("label", { for: name }, control.description), select, el("span")];
  }

  /** Put control c's row where the state shown has it: position, readout, enabled. In place,
   * so that a slider being dragged stays the element under the pointer. */
  function set(c, shown) {
    const options = m.options[state.options[c]];
    const at = state.at[c];
    const disabled = state.disabled[c] || options.length < 2; // or nowhere to move it
    const inputs = shown.querySelectorAll("input, select");
    inputs.forEach((input, j) => {
      input.disabled = disabled;
      if (input.type === "radio") input.checked = j === at;
    });
    const input = inputs[0];
    if (m.controls[c].kind === "checkbox") input.checked = options[at][1] === "on";
    else if (input.type !== "radio" && Number(input.value) !== at) input.value = at;
    if (input.type === "range") {
      input.setAttribute("aria-valuetext", options[at][1]);
      shown.querySelector("output").textContent = m.texts[state.readouts[c]] || options[at][1];
    }
  }

  /** Draw a control's row anew where the state's options differ from those shown (compared by
   * content: the whole manifest numbers them otherwise), then set every row to the state. */
  function controls() {
    m.controls.forEach((_, c) => {
      const options = JSON.stringify(m.options[state.options[c]]);
      const shown = rows[c];
      if (shown?.options !== options) {
        const focused = shown?.row.contains(document.activeElement);
        const fresh = el("div", { class: "attnlib-static-row" }, ...row(c));
        if (shown) shown.row.replaceWith(fresh);
        else box.append(fresh);
        rows[c] = { row: fresh, options };
        set(c, fresh);
        if (focused) fresh.querySelector("input:checked, input, select")?.focus();
      } else {
        set(c, shown.row);
      }
    });
  }

  /** Fetch the pictures one move away, so that a move shows its picture at once. */
  function ahead() {
    state.options.forEach((list, c) => {
      const count = m.options[list].length;
      const at = state.at[c];
      const near = m.controls[c].kind === "slider" ? [at - 1, at + 1] : [...Array(count).keys()];
      for (const j of near.filter((j) => j >= 0 && j < count)) {
        const next = stateOf(keyAfter(c, j));
        if (next !== undefined && next.picture >= 0 && !fetched.has(url(next))) {
          fetched.add(url(next));
          new Image().src = url(next);
        }
      }
    });
  }

  function show(nextKey, next) {
    key = nextKey;
    root.dataset.key = key; // the state shown, for tests and benchmarks
    state = next;
    controls();
    error.textContent = m.texts[state.error];
    if (state.picture >= 0) {
      caption.innerHTML = m.texts[state.caption]; // written by the lab: escaped text and <br>
      picture.alt = m.texts[state.alt];
      picture.src = url(state);
    }
    if (whole !== null) whole.then(ahead);
  }

  box.replaceChildren();
  root.dataset.key = key;
  controls();
  const touch = () => load().then(ahead);
  for (const event of ["pointerenter", "focusin", "touchstart"]) {
    root.addEventListener(event, touch, { once: true, passive: true });
  }
  root.classList.add("attnlib-static-ready");
}

for (const root of document.querySelectorAll(".attnlib-static-lab")) start(root);
