// The browser half of attnlib.liveview.static (read its docstring first).
//
// Turns every `.attnlib-static-lab[data-manifest]` on the page into a lab without a kernel: its
// controls (the live lab's, by kind, description and options) above its caption and picture.
// A move looks up the state reached (by its key, as the kernel writes it) and shows the picture
// the lab drew for that state at build time; the pictures one move away are fetched ahead.

let made = 0; // the forms made on this page, for unique element ids

/** An element with attributes and children. */
function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  node.append(...children);
  return node;
}

async function start(root) {
  const address = new URL(root.dataset.manifest, document.baseURI);
  const m = await (await fetch(address)).json();
  const folder = new URL(`${m.folder}/`, address);
  const id = `attnlib-static-${(made += 1)}`;
  const picture = root.querySelector("img");
  const caption = root.querySelector(".attnlib-static-caption");
  const error = root.querySelector(".attnlib-static-error");
  const box = root.querySelector(".attnlib-static-controls");
  const rows = m.controls.map(() => ({ row: null, options: null }));
  const fetched = new Set([picture.getAttribute("src")]);
  let state = m.states[m.first];

  const url = (s) => new URL(`${s.picture}.${m.format}`, folder).href;
  const optionsOf = (s, c) => m.options[s.options[c]];

  /** The state one move away: control c to its option j (undefined if it is not stored). */
  function reached(c, j) {
    const places = state.options.map((list, i) => m.options[list][i === c ? j : state.at[i]][0]);
    const key = `[${places.join(",")}]`;
    return m.states[key] ?? m.states[m.aliases[key]];
  }

  function move(c, j) {
    const next = reached(c, j);
    if (next !== undefined) show(next);
  }

  /** The row of control c for the options and position of the state shown. */
  function row(c) {
    const control = m.controls[c];
    const options = optionsOf(state, c);
    const at = state.at[c];
    const disabled = state.disabled[c];
    const name = `${id}-${c}`;
    if (control.kind === "slider") {
      const input = el("input", { type: "range", id: name, min: 0, max: options.length - 1 });
      input.value = at;
      input.disabled = disabled;
      input.setAttribute("aria-valuetext", options[at][1]);
      input.addEventListener("input", () => move(c, Number(input.value)));
      const readout = m.texts[state.readouts[c]] || options[at][1];
      return [el("label", { for: name }, control.description), input, el("output", { for: name }, readout)];
    }
    if (control.kind === "checkbox") {
      const input = el("input", { type: "checkbox", id: name });
      input.checked = options[at][1] === "on";
      input.disabled = disabled;
      input.addEventListener("change", () =>
        move(c, options.findIndex((option) => option[1] === (input.checked ? "on" : "off"))),
      );
      return [el("span"), el("label", {}, input, ` ${control.description}`), el("span")];
    }
    if (control.kind === "buttons") {
      const group = el("fieldset", { class: "attnlib-static-buttons" }, el("legend", {}, control.description));
      options.forEach(([, label], j) => {
        const input = el("input", { type: "radio", name, value: j });
        input.checked = j === at;
        input.disabled = disabled;
        input.addEventListener("change", () => move(c, j));
        group.append(el("label", {}, input, label));
      });
      return [el("span", { "aria-hidden": "true" }, control.description), group, el("span")];
    }
    const select = el("select", { id: name });
    options.forEach(([, label], j) => select.append(el("option", { value: j }, label)));
    select.value = at;
    select.disabled = disabled;
    select.addEventListener("change", () => move(c, Number(select.value)));
    return [el("label", { for: name }, control.description), select, el("span")];
  }

  /** Draw the controls anew where the state's options or position differ from those shown. */
  function controls() {
    m.controls.forEach((control, c) => {
      const shown = rows[c];
      const now = `${state.options[c]}:${state.at[c]}:${state.disabled[c]}:${state.readouts[c]}`;
      if (shown.options === now) return;
      const focused = shown.row !== null && shown.row.contains(document.activeElement);
      const fresh = el("div", { class: "attnlib-static-row" }, ...row(c));
      if (shown.row === null) box.append(fresh);
      else shown.row.replaceWith(fresh);
      rows[c] = { row: fresh, options: now };
      if (focused) fresh.querySelector("input, select")?.focus();
    });
  }

  /** Fetch the pictures one move away, so that a move shows its picture at once. */
  function ahead() {
    state.options.forEach((list, c) => {
      const at = state.at[c];
      const near = m.controls[c].kind === "slider" ? [at - 1, at + 1] : m.options[list].keys();
      for (const j of near) {
        const next = j >= 0 && j < m.options[list].length ? reached(c, j) : undefined;
        if (next?.picture && !fetched.has(url(next))) {
          fetched.add(url(next));
          new Image().src = url(next);
        }
      }
    });
  }

  function show(next) {
    state = next;
    controls();
    error.textContent = m.texts[state.error];
    if (state.picture) {
      caption.innerHTML = m.texts[state.caption]; // written by the lab: escaped text and <br>
      picture.alt = m.texts[state.alt];
      picture.src = url(state);
    }
    ahead();
  }

  box.replaceChildren();
  show(state);
  root.classList.add("attnlib-static-ready");
}

for (const root of document.querySelectorAll(".attnlib-static-lab[data-manifest]")) start(root);
