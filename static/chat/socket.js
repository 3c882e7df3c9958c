// The websocket connection: connect, reconnect with capped exponential backoff and jitter, keep-alive pings.
// It knows nothing about threads; app.js resubscribes from its `onOpen` callback.

const PING_INTERVAL_MS = 25_000;
const BACKOFF_BASE_MS = 500;
const BACKOFF_CAP_MS = 15_000;
const CLOSE_UNAUTHENTICATED = 4401;
// The server refuses a frame over its size limit (AGENTWEB_MAX_FRAME_BYTES) by closing the socket with 1009.
const CLOSE_MESSAGE_TOO_BIG = 1009;

/** The websocket URL on this page's host: ws: for http:, wss: for https:. */
export function socketUrl(path = "/ws/chat/") {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  return `${scheme}//${location.host}${path}`;
}

/** Delay before reconnect attempt `attempt` (0-based): exponential, capped, with "equal jitter". */
export function backoffDelay(attempt, random = Math.random) {
  const ceiling = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** Math.min(attempt, 16));
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

export class ChatSocket {
  /**
   * @param {object} handlers
   * @param {(event: object) => void} handlers.onEvent   every JSON object the server sends
   * @param {(reconnected: boolean) => void} handlers.onOpen
   * @param {(state: string) => void} handlers.onState  "connecting" | "connected" | "reconnecting" | "signed-out"
   * @param {() => void} handlers.onTooLarge  the server closed the socket over a frame too large to take
   */
  constructor({ url = socketUrl(), onEvent, onOpen, onState, onTooLarge }) {
    this.url = url;
    this.onEvent = onEvent || (() => {});
    this.onOpen = onOpen || (() => {});
    this.onState = onState || (() => {});
    this.onTooLarge = onTooLarge || (() => {});
    this.ws = null;
    this.attempt = 0;
    this.everOpened = false;
    this.stopped = false;
    this.reconnectTimer = null;
    this.pingTimer = null;
    this.lastHeard = 0;
  }

  get isOpen() {
    return this.ws !== null && this.ws.readyState === WebSocket.OPEN;
  }

  start() {
    this.stopped = false;
    window.addEventListener("online", () => this.reconnectNow());
    document.addEventListener("visibilitychange", () => {
      if (document.visibilityState === "visible") this.reconnectNow();
    });
    this.connect();
  }

  /** Sends one frame; returns false (and sends nothing) when the socket is not open. */
  send(frame) {
    if (!this.isOpen) return false;
    this.ws.send(JSON.stringify(frame));
    return true;
  }

  /** Skips the remaining backoff wait, e.g. when the network comes back. */
  reconnectNow() {
    if (this.stopped || this.ws !== null) return;
    clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
    this.connect();
  }

  connect() {
    this.onState(this.everOpened ? "reconnecting" : "connecting");
    let ws;
    try {
      ws = new WebSocket(this.url);
    } catch (err) {
      console.error("agentweb: cannot open websocket", err);
      this.scheduleReconnect();
      return;
    }
    this.ws = ws;
    ws.addEventListener("open", () => {
      if (this.ws !== ws) return;
      const reconnected = this.everOpened;
      this.everOpened = true;
      this.attempt = 0;
      this.lastHeard = Date.now();
      this.startPing();
      this.onState("connected");
      this.onOpen(reconnected);
    });
    ws.addEventListener("message", (msg) => {
      if (this.ws !== ws) return;
      this.lastHeard = Date.now();
      let event;
      try {
        event = JSON.parse(msg.data);
      } catch {
        console.warn("agentweb: ignoring a frame that is not JSON");
        return;
      }
      if (event && typeof event === "object") this.onEvent(event);
    });
    ws.addEventListener("close", (ev) => {
      if (this.ws !== ws) return;
      this.ws = null;
      this.stopPing();
      if (ev.code === CLOSE_UNAUTHENTICATED) {
        this.stopped = true;
        this.onState("signed-out");
        return;
      }
      if (ev.code === CLOSE_MESSAGE_TOO_BIG) this.onTooLarge();
      this.scheduleReconnect();
    });
    // An "error" is always followed by "close"; reconnecting is handled there.
  }

  scheduleReconnect() {
    if (this.stopped) return;
    this.onState("reconnecting");
    const delay = backoffDelay(this.attempt);
    this.attempt += 1;
    clearTimeout(this.reconnectTimer);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      this.connect();
    }, delay);
  }

  startPing() {
    this.stopPing();
    this.pingTimer = setInterval(() => {
      // Nothing heard for two ping intervals: the connection is dead even if the browser hasn't noticed.
      if (Date.now() - this.lastHeard > 2 * PING_INTERVAL_MS + 5_000) {
        const ws = this.ws;
        if (ws) {
          this.ws = null;
          this.stopPing();
          ws.close();
          this.scheduleReconnect();
        }
        return;
      }
      this.send({ type: "ping" });
    }, PING_INTERVAL_MS);
  }

  stopPing() {
    clearInterval(this.pingTimer);
    this.pingTimer = null;
  }
}
