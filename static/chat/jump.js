// "Jump to latest" (docs/ui.md, Messages): while the person reads higher up and the conversation goes on below
// (an answer streaming, or simply more than a screen under them), a button over the composer brings them back to
// the bottom, where the page follows the answer again (thread.js AutoScroller).

import { _ } from "./i18n.js";

const SLACK = 48; // px from the bottom that still count as "at the bottom" (AutoScroller's slack)

export class JumpToLatest {
  /**
   * @param {object} o
   * @param {HTMLElement} o.scroller  #messages
   * @param {HTMLButtonElement|null} o.button  #jump-latest
   * @param {{stick: boolean, toBottom: () => void}} o.follower  the conversation's AutoScroller
   * @param {HTMLElement|null} o.input  the composer's box: the focus goes there once at the bottom (with a keyboard)
   */
  constructor({ scroller, button, follower, input }) {
    Object.assign(this, { scroller, button, follower, input });
    if (!scroller || !button) return;
    button.title = _("Scroll to the newest message");
    button.addEventListener("click", () => this.jump());
    scroller.addEventListener("scroll", () => this.queue(), { passive: true });
    // The conversation grows under the person (a stream): measured at most once per frame.
    new MutationObserver(() => this.queue()).observe(scroller, { childList: true, subtree: true, characterData: true });
    this.frame = 0;
  }

  queue() {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.update();
    });
  }

  update() {
    // Following the bottom (the usual case while an answer streams): nothing to show, and no layout to read.
    if (this.follower.stick) {
      if (!this.button.hidden) this.button.hidden = true;
      return;
    }
    const { scrollTop, scrollHeight, clientHeight } = this.scroller;
    const below = scrollHeight - scrollTop - clientHeight > SLACK;
    if (this.button.hidden === below) this.button.hidden = !below;
  }

  jump() {
    const hadFocus = document.activeElement === this.button;
    this.follower.toBottom();
    this.button.hidden = true;
    // The button goes away under the keyboard's focus: give it to the box (not on a touch screen, where that
    // would open the on-screen keyboard over the answer just reached).
    if (hadFocus && this.input && !matchMedia("(hover: none)").matches) this.input.focus();
  }
}
