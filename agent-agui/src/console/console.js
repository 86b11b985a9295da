// The eugene console: reads the threads (GET /agui/threads), starts runs and sends decisions
// (POST /agui), and shows a run's AG-UI events as they stream. Every request carries the token
// the person typed or opened the page with (#token=…), kept in this tab's sessionStorage.
// Nothing is written into the page as HTML: all text goes in through textContent. An edited
// call is checked against its skill's schema by schema.js (window.eugeneSchema), loaded first.
"use strict";

(() => {
  const KEY = "eugene-console-token";
  const $ = (id) => document.getElementById(id);
  let listing = [];
  let current = null;
  let decisions = {};
  let busy = false;
  let view = { depth: 0, messages: {}, calls: {}, agents: {} };

  const token = () => sessionStorage.getItem(KEY) || "";

  function takeFragment() {
    const found = /^#token=(.+)$/.exec(location.hash);
    if (found) {
      sessionStorage.setItem(KEY, decodeURIComponent(found[1]));
      history.replaceState(null, "", location.pathname);
    }
  }

  function status(text, error) {
    const line = $("status");
    line.textContent = text;
    line.className = error ? "error" : "";
  }

  function api(path, init) {
    const options = Object.assign({}, init || {});
    options.headers = Object.assign({}, options.headers || {}, {
      Authorization: "Bearer " + token(),
    });
    options.cache = "no-store";
    options.credentials = "omit";
    return fetch(path, options);
  }

  function element(tag, className, text) {
    const made = document.createElement(tag);
    if (className) made.className = className;
    if (text !== undefined) made.textContent = text;
    return made;
  }

  function newId(prefix) {
    const random = window.crypto && crypto.randomUUID
      ? crypto.randomUUID()
      : Date.now() + "-" + Math.random().toString(16).slice(2);
    return prefix + "-" + random;
  }

  async function refresh() {
    let response;
    try {
      response = await api("/agui/threads");
    } catch (error) {
      status("the server cannot be reached: " + error, true);
      return;
    }
    if (response.status === 401) {
      listing = [];
      renderThreads();
      renderPending();
      status("401: no token, or a wrong one. Type the token above.", true);
      return;
    }
    if (!response.ok) {
      status(response.status + ": " + (await response.text()), true);
      return;
    }
    listing = (await response.json()).threads;
    status("connected: " + listing.length + " thread(s)", false);
    renderThreads();
    renderPending();
    // How many listings were shown: a test waits for the next one.
    document.body.dataset.listings = String(Number(document.body.dataset.listings || 0) + 1);
  }

  function renderThreads() {
    const list = $("threads");
    list.replaceChildren();
    for (const thread of listing) {
      const item = element("li", thread.id === current ? "selected" : "", thread.id);
      item.dataset.thread = thread.id;
      item.appendChild(element("span", "state " + thread.state, thread.state));
      item.addEventListener("click", () => select(thread.id));
      list.appendChild(item);
    }
  }

  function select(id) {
    if (id === current) return;
    current = id;
    decisions = {};
    $("thread").value = id;
    $("events").replaceChildren();
    $("usage").textContent = "";
    $("agents").replaceChildren();
    $("finish").textContent = "";
    view = { depth: 0, messages: {}, calls: {}, agents: {} };
    renderThreads();
    renderPending();
    loadTrace(id);
  }

  // The thread's conversation as the server kept it (GET /agui/threads/{id}): what a finished
  // or paused run did, shown when the thread is selected.
  async function loadTrace(id) {
    const list = $("trace");
    list.replaceChildren();
    let response;
    try {
      response = await api("/agui/threads/" + encodeURIComponent(id));
    } catch (error) {
      return;
    }
    if (!response.ok || id !== current) return;
    const trace = await response.json();
    if (id !== current) return;
    for (const message of trace.transcript) {
      const add = (className, text) => list.appendChild(element("li", className, text));
      if (message.answers) {
        add("trace-result" + (message.isError ? " error" : ""), "↳ " + message.answers + ": " + message.text);
      } else if (message.text) {
        add("trace-" + message.role, message.role + ": " + message.text);
      }
      for (const call of message.calls) {
        add("trace-call", "⚙ " + call.name + " " + JSON.stringify(call.arguments));
      }
    }
    document.body.dataset.traces = String(Number(document.body.dataset.traces || 0) + 1);
  }

  // The pending calls of the thread shown, each with its decision buttons.
  function renderPending() {
    const box = $("pending");
    box.replaceChildren();
    const thread = listing.find((t) => t.id === current);
    if (!thread || thread.pending.length === 0) {
      box.appendChild(element("p", "none", "None."));
      return;
    }
    for (const call of thread.pending) {
      box.appendChild(card(thread, call));
    }
  }

  function card(thread, call) {
    const box = element("div", "call");
    box.dataset.interrupt = call.interruptId;
    box.appendChild(element("div", "path", call.path));
    box.appendChild(element("div", "skill", "skill: " + call.skill));
    box.appendChild(element("div", "reason", "reason: " + call.reason));
    box.appendChild(element("pre", "arguments", JSON.stringify(call.arguments, null, 2)));
    box.appendChild(element("div", "digest none", "digest " + call.digest));
    const buttons = element("div", "buttons");
    const approve = element("button", "approve", "Approve");
    const deny = element("button", "deny", "Deny");
    const edit = element("button", "edit", "Edit");
    for (const button of [approve, deny, edit]) {
      button.type = "button";
      buttons.appendChild(button);
    }
    box.appendChild(buttons);
    const editor = element("div", "editor");
    editor.hidden = true;
    const text = element("textarea", "edited");
    text.rows = 6;
    text.value = JSON.stringify(call.arguments, null, 2);
    const send = element("button", "send-edit", "Send edited call");
    send.type = "button";
    const problem = element("p", "edit-error");
    editor.append(text, send, problem);
    box.appendChild(editor);
    approve.addEventListener("click", () => decide(thread, call, { approved: true }));
    deny.addEventListener("click", () =>
      decide(thread, call, { approved: false, reason: "denied in the console" }));
    edit.addEventListener("click", () => { editor.hidden = false; });
    send.addEventListener("click", () => {
      let value;
      try {
        value = JSON.parse(text.value);
      } catch (error) {
        problem.textContent = "not JSON: " + error.message;
        return;
      }
      // The check is the page's (schema.js), for the person; the server parses what is sent.
      if (!window.eugeneSchema) {
        problem.textContent = "the schema check did not load: reload the page";
        return;
      }
      const errors = window.eugeneSchema.check(value, call.inputSchema);
      if (errors.length > 0) {
        problem.textContent = errors.join("; ");
        return;
      }
      problem.textContent = "";
      decide(thread, call, { approved: true, editedArgs: value });
    });
    return box;
  }

  function decide(thread, call, payload) {
    if (busy) return;
    decisions[call.interruptId] = payload;
    const waiting = thread.pending.filter((p) => !(p.interruptId in decisions));
    if (waiting.length > 0) {
      $("finish").textContent = waiting.length + " more call(s) to decide before sending";
      return;
    }
    const resume = thread.pending.map((p) => ({
      interruptId: p.interruptId,
      status: "resolved",
      payload: decisions[p.interruptId],
    }));
    decisions = {};
    stream({ threadId: thread.id, runId: newId("decide"), messages: [], resume: resume });
  }

  function startRun(event) {
    event.preventDefault();
    if (busy) return;
    const thread = $("thread").value.trim();
    const goal = $("goal").value;
    if (!thread || !goal.trim()) return;
    select(thread);
    stream({
      threadId: thread,
      runId: newId("run"),
      messages: [{ id: newId("msg"), role: "user", content: goal }],
    });
  }

  // Asks the server to cancel the run going on in the thread shown.
  async function cancelRun() {
    if (!current) return;
    const response = await api("/agui/threads/" + encodeURIComponent(current) + "/cancel", {
      method: "POST",
    });
    if (!response.ok) status(response.status + ": " + (await response.text()), true);
  }

  async function stream(input) {
    busy = true;
    document.body.dataset.busy = "1";
    $("cancel").disabled = false;
    const body = Object.assign({ tools: [], context: [], state: {}, forwardedProps: {} }, input);
    $("finish").textContent = "running…";
    try {
      const response = await api("/agui", {
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
        body: JSON.stringify(body),
      });
      if (!response.ok) {
        const text = response.status + ": " + (await response.text());
        status(text, true);
        $("finish").textContent = "refused: " + text;
        return;
      }
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let end;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const chunk = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = chunk.split("\n").filter((l) => l.startsWith("data:"))
            .map((l) => l.slice(5).trimStart()).join("\n");
          if (data && input.threadId === current) show(JSON.parse(data));
        }
      }
    } catch (error) {
      status("the run's stream broke: " + error, true);
    } finally {
      busy = false;
      $("cancel").disabled = true;
      await refresh();
      document.body.dataset.busy = "0";
    }
  }

  function line(className, text, depth) {
    const item = element("li", className, text);
    item.dataset.depth = String(depth);
    item.style.paddingLeft = depth * 1.5 + "em";
    $("events").appendChild(item);
    return item;
  }

  // How deep an event is: the depth of the agent it is attributed to (0: the run's own).
  const depthOf = (event) => {
    const agent = view.agents[event.subagentRunId];
    return agent ? agent.depth : 0;
  };

  // One AG-UI event, into the run's view.
  function show(event) {
    switch (event.type) {
      case "RUN_STARTED":
        line("run", "run " + event.runId + " started", 0);
        break;
      case "STEP_STARTED":
        view.depth = event.stepName.split(" › ").length - 1;
        line("step", "▸ " + event.stepName, view.depth);
        break;
      case "TEXT_MESSAGE_START":
        view.messages[event.messageId] = line("text", "", view.depth);
        break;
      case "REASONING_MESSAGE_START":
        view.messages[event.messageId] = line("reasoning", "", view.depth);
        break;
      // An agent the run called: a line where it starts and one where it ends, at the depth of
      // the agent that called it; its own steps are indented under them.
      case "SUBAGENT_STARTED": {
        const parent = view.agents[event.parentSubagentRunId];
        const depth = parent ? parent.depth + 1 : 1;
        view.agents[event.subagentRunId] = { name: event.name, depth: depth };
        line("subagent", "⤷ " + event.name, depth - 1);
        break;
      }
      case "SUBAGENT_FINISHED":
      case "SUBAGENT_ERROR": {
        const agent = view.agents[event.subagentRunId] || { name: "?", depth: 1 };
        const how = event.type === "SUBAGENT_ERROR" ? "failed: " + event.message
          : event.outcome && event.outcome.type === "suspended" ? "waits for a decision" : "done";
        line(event.type === "SUBAGENT_ERROR" ? "subagent error" : "subagent",
          "⤶ " + agent.name + " " + how, agent.depth - 1);
        break;
      }
      case "REASONING_MESSAGE_CONTENT":
      case "TEXT_MESSAGE_CONTENT": {
        const kind = event.type === "TEXT_MESSAGE_CONTENT" ? "text" : "reasoning";
        const item = view.messages[event.messageId] || line(kind, "", view.depth);
        view.messages[event.messageId] = item;
        item.textContent += event.delta;
        break;
      }
      case "TOOL_CALL_START": {
        const item = line("tool-call", "", depthOf(event));
        view.calls[event.toolCallId] = { item: item, name: event.toolCallName, args: "" };
        item.textContent = "⚙ " + event.toolCallName + " ";
        break;
      }
      case "TOOL_CALL_ARGS": {
        const call = view.calls[event.toolCallId];
        if (!call) break;
        call.args += event.delta;
        call.item.textContent = "⚙ " + call.name + " " + call.args;
        break;
      }
      case "TOOL_CALL_RESULT":
        line("tool-result", "→ " + event.content, depthOf(event));
        break;
      case "STATE_SNAPSHOT": {
        const s = event.snapshot || {};
        if (s.steps !== undefined) {
          $("usage").textContent = "steps " + s.steps + " · tokens in " + s.inputTokens +
            " out " + s.outputTokens + " · cost " + s.cost;
        }
        // Each agent's part: steps, tokens, cost and who answered it.
        const agents = $("agents");
        agents.replaceChildren();
        for (const [path, a] of Object.entries(s.agents || {})) {
          const who = a.provider + (a.model ? " " + a.model : "");
          agents.appendChild(element("li", "agent", (path || "this agent") + ": steps " + a.steps +
            " · tokens in " + a.inputTokens + " out " + a.outputTokens + " · cost " + a.cost +
            " · " + who));
        }
        break;
      }
      case "RUN_FINISHED": {
        const outcome = event.outcome || { type: "success" };
        let text = "finished: " + outcome.type;
        if (outcome.type === "interrupt") {
          text += " (" + outcome.interrupts.length + " call(s) wait for a decision)";
        } else if (event.result !== undefined) {
          text += ": " + event.result;
        }
        $("finish").textContent = text;
        line("run", text, 0);
        break;
      }
      case "RUN_ERROR":
        $("finish").textContent = "refused: " + event.message + " (" + event.code + ")";
        line("error", "error: " + event.message, 0);
        break;
      case "CUSTOM":
        line("custom", event.name + " " + JSON.stringify(event.value), view.depth);
        break;
      default:
        break;
    }
  }

  function start() {
    takeFragment();
    document.body.dataset.busy = "0";
    $("token-form").addEventListener("submit", (event) => {
      event.preventDefault();
      sessionStorage.setItem(KEY, $("token").value.trim());
      $("token").value = "";
      refresh();
    });
    $("refresh").addEventListener("click", refresh);
    $("run-form").addEventListener("submit", startRun);
    $("cancel").addEventListener("click", cancelRun);
    window.addEventListener("hashchange", () => { takeFragment(); refresh(); });
    refresh();
  }

  start();
})();
