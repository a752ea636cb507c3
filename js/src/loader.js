// @ts-check
/**
 * What a view fetches from the kernel when the reader opens it (spec Q-2): the content of a fold
 * Python sent only as a header, by key, and the whole of an output the view model capped, in
 * parts. Every view of a widget that defers content (the transcript view, the compare view)
 * fetches through one of these; the kernel's transport answers (src/turnfold/transport.py).
 *
 * Content arrives with `content` messages (and along with `reveal` and `search` answers) and is
 * kept until the view changes under it (`clear`); output parts arrive with `output` messages.
 */

/** @typedef {import("./tree.js").Node} Node */
/** @typedef {import("./messages").ContentRequest | import("./messages").OutputRequest} Request */

export class ContentLoader {
  /**
   * @param {string} viewId  this view's id: the kernel answers the view that asked
   * @param {(request: Request) => void} send  sends one request to the kernel
   */
  constructor(viewId, send) {
    this.viewId = viewId;
    this.send = send;
    /** @type {Map<string, Node | null>} content here, by key (null: gone) */
    this.loaded = new Map();
    /** @type {Map<string, ((node: Node | null) => void)[]>} */
    this.waiting = new Map();
    /** @type {Set<string>} keys asked for in this task, sent as one request */
    this.asking = new Set();
    /** @type {Map<string, (text: string, done: boolean) => void>} */
    this.outputs = new Map();
    /** No kernel answered this view (N-1: a saved notebook, or a kernel still busy). */
    this.unanswered = false;
  }

  /** Content already here (undefined: not yet asked for). @param {string} key */
  ready(key) {
    return this.loaded.get(key);
  }

  /** Whether what must be asked for needs the running notebook (no kernel answered). */
  silent() {
    return this.unanswered;
  }

  /** The node `key` with what it holds; null when it is gone. @param {string} key @returns {Promise<Node | null>} */
  content(key) {
    return new Promise((resolve) => {
      const queued = this.waiting.get(key);
      if (queued) {
        queued.push(resolve);
        return;
      }
      this.waiting.set(key, [resolve]);
      this.asking.add(key);
      if (this.asking.size === 1) {
        queueMicrotask(() => {
          const keys = [...this.asking];
          this.asking.clear();
          try {
            this.send({ type: "content", view: this.viewId, keys });
          } catch (error) {
            // No kernel to ask: the folds waiting for these keys say so after a while.
            console.warn("turnfold: could not ask the kernel for content", error);
          }
        });
      }
    });
  }

  /** The whole output of tool `key`, in parts. @param {string} key @param {(text: string, done: boolean) => void} onPart */
  output(key, onPart) {
    this.outputs.set(key, onPart);
    try {
      this.send({ type: "output", view: this.viewId, key });
    } catch (error) {
      console.warn("turnfold: could not ask the kernel for an output", error); // said in the view
    }
  }

  /** Content the kernel sent, by key. @param {Record<string, Node | null> | undefined} nodes */
  receive(nodes) {
    for (const [key, node] of Object.entries(nodes ?? {})) {
      this.loaded.set(key, node);
      for (const resolve of this.waiting.get(key) ?? []) resolve(node);
      this.waiting.delete(key);
    }
  }

  /** One part of an output this view asked for. @param {import("./messages").OutputMessage} message */
  part(message) {
    const done = message.part + 1 >= message.parts;
    this.outputs.get(message.key)?.(String(message.text ?? ""), done);
    if (done) this.outputs.delete(message.key);
  }

  /** Forget what was fetched: the view it belongs to changed. */
  clear() {
    this.loaded.clear();
  }
}
