// A running tool's request for the person's input (tool_call.input_requested): a form built from the requested
// schema, with Accept / Decline / Cancel, shown on the tool card like an approval. The schema is MCP's restricted
// one: a flat object of string (format email, uri, date, date-time; minLength / maxLength), number / integer
// (minimum / maximum), boolean and enum (enum with optional enumNames, or oneOf of {const, title}) properties.
// The message, titles, descriptions and option names are the tool's (an MCP server's) text: DOM nodes and
// textContent only, never markup.

import { CardForm } from "./card-form.js";
import { el, button, isJsonObject } from "./dom.js";
import { _, format as fill } from "./i18n.js";

let formCounter = 0;

/** The form for one open request. The card mounts `root` and forwards the server's answers. */
export class InputForm extends CardForm {
  /**
   * @param {object} o
   * @param {string} o.request  the request's id
   * @param {string} o.message  what the tool asks
   * @param {object} o.schema   the requested schema
   * @param {(payload: {request: string, action: string, content?: object}) => void} o.onSend
   */
  constructor({ request, message, schema, onSend }) {
    super(_("Sending your answer…"));
    this.request = String(request);
    this.onSend = onSend;
    this.uid = ++formCounter;
    this.fields = [];
    this.root = el("form", "input-request");
    this.root.noValidate = true;
    this.root.dataset.request = this.request;
    this.fieldset = el("fieldset", "input-fieldset");
    this.fieldset.append(el("legend", "input-request-label", _("The tool asks for your input.")));
    const asked = el("p", "input-request-message", typeof message === "string" ? message : "");
    asked.id = `input-${this.uid}-message`;
    this.fieldset.append(asked);
    this.root.setAttribute("aria-describedby", asked.id);

    const properties = isJsonObject(schema) && isJsonObject(schema.properties) ? schema.properties : {};
    const required = new Set(Array.isArray(schema?.required) ? schema.required.map(String) : []);
    for (const [name, prop] of Object.entries(properties)) {
      const field = buildField(name, isJsonObject(prop) ? prop : {}, required.has(name), `input-${this.uid}-${this.fields.length}`);
      this.fields.push(field);
      this.fieldset.append(field.root);
    }

    const actions = el("div", "input-actions");
    const accept = el("button", "button primary input-accept", _("Accept"));
    accept.type = "submit";
    actions.append(
      accept,
      button(_("Decline"), "button input-decline", () => this.send({ action: "decline" })),
      button(_("Cancel"), "button subtle input-cancel", () => this.send({ action: "cancel" })),
    );
    this.fieldset.append(actions);
    this.messageEl = el("p", "input-message");
    this.messageEl.hidden = true;
    this.root.append(this.fieldset, this.messageEl);
    this.root.addEventListener("submit", (e) => {
      e.preventDefault();
      this.submit();
    });
  }

  /** Accept: every field read and checked here first; a problem is shown at its field and nothing is sent. */
  submit() {
    if (this.sending) return;
    const content = {};
    let firstBad = null;
    for (const field of this.fields) {
      const { value, error } = field.read();
      field.showError(error);
      if (error) firstBad = firstBad || field;
      else if (value !== undefined) content[field.name] = value;
    }
    if (firstBad) {
      firstBad.focus();
      return;
    }
    this.send({ action: "accept", content });
  }

  send(payload) {
    super.send({ request: this.request, ...payload });
  }

  focus() {
    (this.fields[0]?.input || this.root.querySelector("button"))?.focus({ preventScroll: true });
  }
}

/** The options of an enum property: [{value, label}], from oneOf {const, title} or enum (+ enumNames). */
export function enumOptions(prop) {
  if (Array.isArray(prop.oneOf) && prop.oneOf.length) {
    return prop.oneOf
      .filter((o) => isJsonObject(o) && "const" in o)
      .map((o) => ({ value: o.const, label: typeof o.title === "string" && o.title ? o.title : String(o.const) }));
  }
  if (Array.isArray(prop.enum) && prop.enum.length) {
    const names = Array.isArray(prop.enumNames) ? prop.enumNames : [];
    return prop.enum.map((value, i) => ({
      value, label: typeof names[i] === "string" && names[i] ? names[i] : String(value),
    }));
  }
  return null;
}

const INPUT_TYPES = { email: "email", uri: "url", date: "date", "date-time": "datetime-local" };

/** One labelled field: {root, name, input, read() → {value, error}, showError(text), focus()}. */
function buildField(name, prop, required, id) {
  const root = el("div", "input-field");
  const title = typeof prop.title === "string" && prop.title ? prop.title : name;
  const label = el("label", "input-label", title);
  label.htmlFor = id;
  // The label holds the title alone (its field's name); a required field is marked beside it, and aria-required.
  const head = el("div", "input-label-row");
  head.append(label);
  if (required) {
    const star = el("span", "input-required", "*");
    star.title = _("required");
    star.setAttribute("aria-hidden", "true");
    head.append(star);
  }
  const describedBy = [];
  let hint = null;
  if (typeof prop.description === "string" && prop.description) {
    hint = el("p", "input-hint", prop.description);
    hint.id = `${id}-hint`;
    describedBy.push(hint.id);
  }
  const errorEl = el("p", "input-error");
  errorEl.id = `${id}-error`;
  errorEl.hidden = true;

  const options = enumOptions(prop);
  let input;
  let read;
  if (options) {
    input = el("select", "input-select");
    if (!required || !("default" in prop)) {
      const none = el("option", "", required ? _("Choose…") : "—");
      none.value = "";
      input.append(none);
    }
    options.forEach((o, i) => {
      const option = el("option", "", o.label);
      option.value = String(i);
      if ("default" in prop && o.value === prop.default) option.selected = true;
      input.append(option);
    });
    read = () => {
      if (input.value === "") return required ? { error: _("Choose one.") } : { value: undefined };
      return { value: options[Number(input.value)].value };
    };
  } else if (prop.type === "boolean") {
    input = el("input", "input-checkbox");
    input.type = "checkbox";
    input.checked = prop.default === true;
    read = () => ({ value: input.checked });
  } else if (prop.type === "number" || prop.type === "integer") {
    input = el("input", "input-number");
    input.type = "number";
    input.step = prop.type === "integer" ? "1" : "any";
    if (typeof prop.minimum === "number") input.min = String(prop.minimum);
    if (typeof prop.maximum === "number") input.max = String(prop.maximum);
    if (typeof prop.default === "number") input.value = String(prop.default);
    read = () => readNumber(input.value.trim(), prop, required);
  } else {
    input = el("input", "input-text");
    const format = typeof prop.format === "string" ? prop.format : "";
    input.type = INPUT_TYPES[format] || "text";
    if (input.type === "datetime-local") input.step = "1";
    if (Number.isInteger(prop.maxLength) && prop.maxLength >= 0) input.maxLength = prop.maxLength;
    if (Number.isInteger(prop.minLength) && prop.minLength >= 0) input.minLength = prop.minLength;
    if (typeof prop.default === "string") input.value = format === "date-time" ? localDateTime(prop.default) : prop.default;
    read = () => readText(input, prop, format, required);
  }
  input.id = id;
  input.name = name;
  if (required) input.setAttribute("aria-required", "true");
  describedBy.push(errorEl.id);
  input.setAttribute("aria-describedby", describedBy.join(" "));

  if (input.type === "checkbox") {
    const row = el("div", "input-check-row");
    row.append(input, head);
    root.append(row);
  } else {
    root.append(head, input);
  }
  if (hint) root.append(hint);
  root.append(errorEl);
  input.addEventListener("input", () => showError(null));

  function showError(text) {
    errorEl.textContent = text || "";
    errorEl.hidden = !text;
    if (text) input.setAttribute("aria-invalid", "true");
    else input.removeAttribute("aria-invalid");
  }
  return { root, name, input, read, showError, focus: () => input.focus() };
}

function readNumber(text, prop, required) {
  if (text === "") return required ? { error: _("Fill this in.") } : { value: undefined };
  const value = Number(text);
  if (!Number.isFinite(value)) return { error: _("Enter a number.") };
  if (prop.type === "integer" && !Number.isInteger(value)) return { error: _("Enter a whole number.") };
  if (typeof prop.minimum === "number" && value < prop.minimum) return { error: fill(_("At least %(n)s."), { n: prop.minimum }) };
  if (typeof prop.maximum === "number" && value > prop.maximum) return { error: fill(_("At most %(n)s."), { n: prop.maximum }) };
  return { value };
}

function readText(input, prop, format, required) {
  let value = input.value;
  if (value === "") {
    if (input.validity.badInput) return { error: _("This is not complete.") };
    return required ? { error: _("Fill this in.") } : { value: undefined };
  }
  if (Number.isInteger(prop.minLength) && [...value].length < prop.minLength) {
    return { error: fill(_("At least %(n)s characters."), { n: prop.minLength }) };
  }
  if (Number.isInteger(prop.maxLength) && [...value].length > prop.maxLength) {
    return { error: fill(_("At most %(n)s characters."), { n: prop.maxLength }) };
  }
  if (format === "email" && !/^[^@\s]+@[^@\s.][^@\s]*$/.test(value)) return { error: _("Enter an email address.") };
  if (format === "uri") {
    try {
      new URL(value);
    } catch {
      return { error: _("Enter an address such as https://example.org/.") };
    }
  }
  if (format === "date-time") {
    value = withOffset(value);
    if (!value) return { error: _("Enter a date and time.") };
  }
  return { value };
}

/** "2025-03-01T10:30" (a datetime-local input, the person's local time) → "2025-03-01T10:30:00+01:00". */
export function withOffset(local) {
  const m = /^(\d{4}-\d{2}-\d{2})T(\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?$/.exec(local);
  if (!m) return "";
  const [, day, hh, mm, ss = "00"] = m;
  const when = new Date(`${day}T${hh}:${mm}:${ss}`);
  if (Number.isNaN(when.getTime())) return "";
  const offset = -when.getTimezoneOffset();
  const sign = offset >= 0 ? "+" : "-";
  const abs = Math.abs(offset);
  const zone = `${sign}${String(Math.floor(abs / 60)).padStart(2, "0")}:${String(abs % 60).padStart(2, "0")}`;
  return `${day}T${hh}:${mm}:${ss}${zone}`;
}

/** An RFC 3339 date-time as a datetime-local input's value, in the person's local time ("" if unreadable). */
function localDateTime(text) {
  const when = new Date(text);
  if (Number.isNaN(when.getTime())) return "";
  const pad = (n) => String(n).padStart(2, "0");
  return `${when.getFullYear()}-${pad(when.getMonth() + 1)}-${pad(when.getDate())}T${pad(when.getHours())}:`
    + `${pad(when.getMinutes())}:${pad(when.getSeconds())}`;
}

/** "Accepted by grace", "Declined", "Cancelled (nobody answered in time)"… for the card once a request closed. */
export function answeredText(action, by) {
  const said = (withWho, alone) => fill(by ? withWho : alone, { by });
  switch (action) {
    case "accept": return said(_("Input given by %(by)s"), _("Input given"));
    case "decline": return said(_("Input declined by %(by)s"), _("Input declined"));
    default: return said(_("Input request cancelled by %(by)s"), _("Input request cancelled"));
  }
}
