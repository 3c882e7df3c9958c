// Agents on the chat page (docs/agents.md): the choice on the empty chat (its buttons are rendered by the server),
// the thread's agent in the header, and the sidebar's filter by agent.

export class AgentChoice {
  /**
   * @param {HTMLElement|null} root  #agent-choices: one button per agent, the default one pressed
   * @param {(slug: string|undefined) => void} onChange  the choice changed (the starting prompts and tools follow it)
   */
  constructor(root, onChange = () => {}) {
    this.root = root;
    if (!root) return;
    root.addEventListener("click", (event) => {
      const button = event.target.closest(".agent-choice");
      if (!button || !root.contains(button)) return;
      const pressed = button.getAttribute("aria-pressed") === "true";
      for (const other of root.querySelectorAll(".agent-choice")) other.setAttribute("aria-pressed", "false");
      button.setAttribute("aria-pressed", pressed ? "false" : "true");
      onChange(this.value);
    });
  }

  /** The slug of the agent chosen for a new thread, or undefined (the server then takes the default agent). */
  get value() {
    const pressed = this.root?.querySelector('.agent-choice[aria-pressed="true"]');
    return pressed ? pressed.dataset.slug : undefined;
  }

  /** The model id of the agent chosen ("" for none, or an agent on the default model). */
  get model() {
    return this.root?.querySelector('.agent-choice[aria-pressed="true"]')?.dataset.model || "";
  }

  /** {slug, name} of the agent chosen, or null: what the header's agent label shows on the empty chat. */
  get info() {
    const pressed = this.root?.querySelector('.agent-choice[aria-pressed="true"]');
    if (!pressed) return null;
    return { slug: pressed.dataset.slug, name: pressed.querySelector(".agent-choice-name")?.textContent || "" };
  }

  /** The step limit of the agent `slug` names (what Continue gives its runs), or null when it is not offered here. */
  steps(slug) {
    const buttons = [...(this.root?.querySelectorAll(".agent-choice") || [])];
    const node = slug ? buttons.find((b) => b.dataset.slug === slug) : null;
    const steps = Number.parseInt(node?.dataset.steps || "", 10);
    return Number.isInteger(steps) && steps > 0 ? steps : null;
  }
}

export class AgentLabel {
  /** @param {HTMLElement|null} node  #agent-label in the header */
  constructor(node) {
    this.node = node;
  }

  /** Shows `agent` ({slug, name} or null). */
  show(agent) {
    if (!this.node) return;
    const name = agent && typeof agent.name === "string" ? agent.name : "";
    this.node.textContent = name;
    this.node.hidden = !name;
    this.node.dataset.slug = agent && typeof agent.slug === "string" ? agent.slug : "";
  }
}

export class AgentFilter {
  /**
   * @param {HTMLSelectElement|null} select  #agent-filter: "*" all, "" no agent, else a slug
   * @param {HTMLElement} list  #thread-list, whose items carry data-agent
   */
  constructor(select, list) {
    Object.assign(this, { select, list });
    if (!select || !list) return;
    select.addEventListener("change", () => this.apply());
    // Threads added to the list later (a new chat, another tab's) are filtered as they come.
    new MutationObserver(() => this.apply()).observe(list, { childList: true });
  }

  apply() {
    if (!this.select) return;
    const wanted = this.select.value;
    for (const li of this.list.children) {
      li.hidden = wanted !== "*" && (li.dataset.agent || "") !== wanted;
    }
  }

  /** Marks the list item of thread `id` with its agent. */
  tag(id, agent) {
    for (const li of this.list.children) {
      if (li.dataset.threadId === String(id)) li.dataset.agent = agent && agent.slug ? agent.slug : "";
    }
    this.apply();
  }
}
