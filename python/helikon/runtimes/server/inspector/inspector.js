// The helikon run inspector: plain JavaScript, no dependencies, no network but this server.
// Everything from a run (model text, tool arguments and results, errors) is shown with
// textContent, never parsed as HTML.
"use strict";

(() => {
  const STORE = "helikon.inspector";
  const TERMINAL = new Set(["run_completed", "run_failed"]);
  const RETRY_MS = 1000;
  const $ = (id) => document.getElementById(id);

  // ------------------------------------------------------------------ state

  // view: the chat on screen. {agent, sessionId, readOnly, runs: [{runId, input, events, done}]}
  // Saved in sessionStorage after every event, so a reload shows the same run and resumes its
  // stream after the last event seen (Last-Event-ID): no event is shown twice.
  let saved = {};
  try {
    saved = JSON.parse(sessionStorage.getItem(STORE) || "{}") || {};
  } catch (_) {
    saved = {};
  }
  const state = { token: saved.token || null, view: saved.view || null, follows: 0 };

  function save() {
    sessionStorage.setItem(STORE, JSON.stringify({ token: state.token, view: state.view }));
  }

  function takeFragment() {
    const params = new URLSearchParams(location.hash.replace(/^#/, ""));
    if (params.has("token")) {
      state.token = params.get("token");
      params.delete("token");
      const rest = params.toString();
      history.replaceState(null, "", location.pathname + location.search + (rest ? "#" + rest : ""));
      save();
    }
  }

  function setStatus(text) {
    $("status").textContent = text;
  }

  // ------------------------------------------------------------------ the API

  function headers(extra) {
    const h = Object.assign({}, extra || {});
    if (state.token) h["Authorization"] = "Bearer " + state.token;
    return h;
  }

  // fetch(), asking for a token once when the server answers 401.
  async function api(path, init) {
    init = init || {};
    let resp = await fetch(path, Object.assign({}, init, { headers: headers(init.headers) }));
    if (resp.status === 401) {
      const token = window.prompt("This server needs a token:");
      if (token) {
        state.token = token;
        save();
        resp = await fetch(path, Object.assign({}, init, { headers: headers(init.headers) }));
      }
    }
    return resp;
  }

  async function apiJson(path, init) {
    const resp = await api(path, init);
    const body = await resp.json().catch(() => ({}));
    if (!resp.ok) {
      throw new Error((body && body.message) || "HTTP " + resp.status);
    }
    return body;
  }

  function runPath(agent, runId) {
    return "../agents/" + encodeURIComponent(agent) + "/runs/" + encodeURIComponent(runId);
  }

  // Read an SSE body, calling onFrame(id, data) for each frame; returns when the body ends.
  async function readSse(resp, onFrame) {
    const reader = resp.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true }).replace(/\r\n/g, "\n");
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let id = null;
        let data = "";
        for (const line of block.split("\n")) {
          if (line.startsWith("id:")) id = Number(line.slice(3).trim());
          else if (line.startsWith("data:")) data += line.slice(5).replace(/^ /, "");
        }
        if (id !== null && data) onFrame(id, JSON.parse(data));
      }
    }
  }

  // ------------------------------------------------------------------ rendering

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function textOf(content) {
    if (typeof content === "string") return content;
    if (!Array.isArray(content)) return JSON.stringify(content);
    return content
      .map((p) => (p && p.type === "text" ? p.text : JSON.stringify(p)))
      .join("");
  }

  function clip(text, n) {
    text = String(text);
    return text.length > n ? text.slice(0, n) + "…" : text;
  }

  // The one-line label of an event in the timeline.
  function label(ev) {
    switch (ev.type) {
      case "run_started":
        return ["run", "agent " + ev.agent];
      case "turn_started":
        return ["model", "turn " + ev.turn];
      case "token_delta":
        return ["model", clip(JSON.stringify(ev.text), 60)];
      case "message_output":
        return ["model", clip(textOf(ev.item.content), 80)];
      case "tool_call_delta":
        return ["tool", (ev.name || "") + " " + clip(ev.args_delta, 60)];
      case "tool_call_item":
        return ["tool", ev.item.name + "(" + clip(JSON.stringify(ev.item.args), 80) + ")"];
      case "tool_output_item":
        return [
          ev.item.is_error ? "error" : "tool",
          (ev.item.is_error ? "error: " : "→ ") + clip(textOf(ev.item.content), 120),
        ];
      case "approval_requested":
        return ["guard", ev.tool + "(" + clip(JSON.stringify(ev.args), 60) + ")"];
      case "permission_denied":
        return ["guard", ev.tool + ": " + ev.reason];
      case "guardrail_triggered":
        return ["guard", ev.kind];
      case "network_access":
        return ["guard", ev.verdict + " " + ev.host + ":" + ev.port + " " + (ev.reason || "")];
      case "handoff_item":
        return ["run", ev.from + " → " + ev.to];
      case "agent_updated":
        return ["run", ev.agent];
      case "conversation_repaired":
        return ["guard", ev.repair + " " + (ev.detail || "")];
      case "run_completed":
        return ["end", usageText(ev.usage)];
      case "run_failed":
        return ["error", (ev.error.kind || "") + ": " + (ev.error.message || "")];
      case "run_interrupted":
        return ["guard", "waiting for approval"];
      default:
        return ["run", ""];
    }
  }

  function usageText(usage) {
    if (!usage) return "";
    const parts = [];
    for (const key of ["input_tokens", "output_tokens", "requests"]) {
      if (usage[key] !== undefined) parts.push(key.replace("_", " ") + " " + usage[key]);
    }
    return parts.join(", ");
  }

  function renderEvent(run, ev) {
    const [kind, text] = label(ev);
    const li = el("li", "kind-" + kind);
    li.dataset.run = run.runId;
    li.dataset.id = String(ev.__id);
    li.value = ev.__id;
    const details = el("details");
    const summary = el("summary");
    summary.append(el("span", "type", ev.type), document.createTextNode(" " + text));
    const data = Object.assign({}, ev);
    delete data.__id;
    details.append(summary, el("pre", "json", JSON.stringify(data, null, 2)));
    li.append(details);
    $("timeline").append(li);

    const chat = $("chat");
    if (ev.type === "turn_started") {
      run.bubble = null;
    } else if (ev.type === "token_delta") {
      if (!run.bubble) {
        run.bubble = el("div", "msg assistant");
        run.bubble.dataset.run = run.runId;
        chat.append(run.bubble);
      }
      run.bubble.textContent += ev.text;
    } else if (ev.type === "message_output") {
      const text = textOf(ev.item.content);
      if (!run.bubble) {
        run.bubble = el("div", "msg assistant", text);
        run.bubble.dataset.run = run.runId;
        chat.append(run.bubble);
      } else {
        run.bubble.textContent = text;
      }
    } else if (ev.type === "run_failed") {
      chat.append(el("div", "msg error", "run failed: " + label(ev)[1]));
    } else if (ev.type === "run_interrupted") {
      run.bubble = null;
      showApprovals(run);
    }
    if (TERMINAL.has(ev.type)) {
      $("usage").textContent = usageText(ev.usage);
    }
    chat.scrollTop = chat.scrollHeight;
  }

  function renderRun(run) {
    const sep = el("li", "kind-run separator", "run " + run.runId);
    sep.dataset.separator = run.runId;
    $("timeline").append(sep);
    if (run.input !== null && run.input !== undefined) {
      $("chat").append(el("div", "msg user", run.input));
    }
    run.bubble = null;
    for (const ev of run.events) renderEvent(run, ev);
  }

  function renderView() {
    $("chat").replaceChildren();
    $("timeline").replaceChildren();
    $("usage").textContent = "";
    const view = state.view;
    document.body.classList.toggle("readonly", Boolean(view && view.readOnly));
    $("chat-title").textContent = view && view.readOnly ? "Run (read-only)" : "Chat";
    if (!view) return;
    if (view.agent && $("agent").value !== view.agent) $("agent").value = view.agent;
    for (const run of view.runs) renderRun(run);
  }

  // ------------------------------------------------------------------ approvals

  // A run paused for approval: one card per waiting call, with approve / deny / edit. The
  // decisions go in one POST once every waiting call has one (the server wants them all).
  async function showApprovals(run) {
    const agent = state.view.agent;
    let body;
    try {
      body = await apiJson(runPath(agent, run.runId) + "/approvals");
    } catch (err) {
      setStatus("error: " + err.message);
      return;
    }
    if (!body.pending || !body.pending.length) return;
    const panel = el("div", "msg approval");
    panel.dataset.run = run.runId;
    panel.append(el("div", "approval-title", "Waiting for approval"));
    const decisions = {};
    const submit = async () => {
      if (Object.keys(decisions).length < body.pending.length) return;
      for (const button of panel.querySelectorAll("button")) button.disabled = true;
      try {
        await apiJson(runPath(agent, run.runId) + "/approvals", {
          method: "POST",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify({ decisions }),
        });
        panel.append(el("div", "approval-done", "answered"));
      } catch (err) {
        panel.append(el("div", "approval-done", "error: " + err.message));
      }
    };
    for (const call of body.pending) {
      const card = el("div", "approval-call");
      card.dataset.call = call.call_id;
      card.append(
        el("div", "approval-what", call.tool + "(" + JSON.stringify(call.args) + ")"),
        el("div", "approval-why", call.reason || ""),
      );
      const decide = (decision, label) => {
        decisions[call.call_id] = decision;
        for (const b of card.querySelectorAll("button")) b.disabled = true;
        card.append(el("span", "approval-choice", label));
        submit();
      };
      const approve = el("button", "approve", "Approve");
      approve.type = "button";
      approve.addEventListener("click", () => decide({ decision: "approve" }, "approved"));
      const deny = el("button", "deny", "Deny");
      deny.type = "button";
      deny.addEventListener("click", () => {
        const reason = window.prompt("Why deny this call?", "") || "denied in the inspector";
        decide({ decision: "deny", reason }, "denied");
      });
      const edit = el("button", "edit", "Edit");
      edit.type = "button";
      edit.addEventListener("click", () => {
        const text = window.prompt("The call's arguments (JSON):", JSON.stringify(call.args));
        if (text === null) return;
        let args;
        try {
          args = JSON.parse(text);
        } catch (err) {
          setStatus("not JSON: " + err.message);
          return;
        }
        decide({ decision: "edit", args }, "edited");
      });
      card.append(approve, deny, edit);
      panel.append(card);
    }
    $("chat").append(panel);
  }

  // ------------------------------------------------------------------ following a run

  // Stream a run's events from the one after the last seen, until its terminal event; a
  // dropped connection is retried with Last-Event-ID, so each event is shown once.
  async function follow(run) {
    const mine = ++state.follows;
    const agent = state.view.agent;
    while (!run.done && mine === state.follows) {
      const last = run.events.length ? run.events[run.events.length - 1].__id : -1;
      const extra = { Accept: "text/event-stream" };
      if (last >= 0) extra["Last-Event-ID"] = String(last);
      try {
        setStatus("streaming " + run.runId);
        const resp = await api(runPath(agent, run.runId) + "/events", { headers: extra });
        if (!resp.ok) {
          const body = await resp.json().catch(() => ({}));
          setStatus("error: " + (body.message || "HTTP " + resp.status));
          return;
        }
        await readSse(resp, (id, data) => {
          if (mine !== state.follows) return;
          const seen = run.events.length ? run.events[run.events.length - 1].__id : -1;
          if (id <= seen) return;
          data.__id = id;
          run.events.push(data);
          if (TERMINAL.has(data.type)) run.done = true;
          save();
          renderEvent(run, data);
        });
      } catch (err) {
        setStatus("connection lost, resuming: " + err.message);
      }
      if (!run.done && mine === state.follows) {
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
      }
    }
    if (mine === state.follows) {
      setStatus(run.done ? "done" : "");
      $("send-button").disabled = false;
      loadRuns();
    }
  }

  // ------------------------------------------------------------------ actions

  function newChat() {
    state.follows++;
    const sessionId = "ui-" + Math.random().toString(36).slice(2, 12);
    state.view = { agent: $("agent").value, sessionId, readOnly: false, runs: [] };
    save();
    renderView();
    $("send-button").disabled = false;
  }

  async function send(event) {
    event.preventDefault();
    const input = $("message").value;
    if (!input.trim()) return;
    if (!state.view || state.view.readOnly || state.view.agent !== $("agent").value) newChat();
    $("send-button").disabled = true;
    const view = state.view;
    try {
      const body = await apiJson(
        "../agents/" + encodeURIComponent(view.agent) + "/runs?mode=async",
        {
          method: "POST",
          headers: { "Content-Type": "application/json", "X-Session-Id": view.sessionId },
          body: JSON.stringify({ input }),
        },
      );
      $("message").value = "";
      const run = { runId: body.run_id, input, events: [], done: false };
      view.runs.push(run);
      save();
      renderRun(run);
      loadRuns();
      await follow(run);
    } catch (err) {
      setStatus("error: " + err.message);
      $("chat").append(el("div", "msg error", err.message));
      $("send-button").disabled = false;
    }
  }

  async function openRun(agent, runId) {
    state.follows++;
    state.view = { agent, sessionId: null, readOnly: true, runs: [] };
    const run = { runId, input: null, events: [], done: false };
    state.view.runs.push(run);
    save();
    renderView();
    await follow(run);
  }

  async function loadAgents() {
    const body = await apiJson("api/agents");
    const select = $("agent");
    select.replaceChildren();
    for (const agent of body.agents) {
      const option = el("option", null, agent.name);
      option.value = agent.name;
      option.title = agent.description;
      select.append(option);
    }
  }

  async function loadRuns() {
    let body;
    try {
      const session = state.view && state.view.sessionId;
      const only = $("session-only").checked && session;
      body = await apiJson("api/runs" + (only ? "?session_id=" + encodeURIComponent(session) : ""));
    } catch (err) {
      setStatus("error: " + err.message);
      return;
    }
    const list = $("runs");
    list.replaceChildren();
    for (const run of body.runs) {
      const li = el("li");
      const button = el("button", null, run.agent + " · " + run.status + " · " + run.run_id.slice(0, 8));
      button.type = "button";
      button.dataset.run = run.run_id;
      button.title = run.run_id + (run.session_id ? " (session " + run.session_id + ")" : "");
      button.addEventListener("click", () => openRun(run.agent, run.run_id));
      li.append(button);
      list.append(li);
    }
  }

  async function start() {
    takeFragment();
    $("send").addEventListener("submit", send);
    $("new-chat").addEventListener("click", newChat);
    $("refresh-runs").addEventListener("click", loadRuns);
    $("session-only").addEventListener("change", loadRuns);
    try {
      await loadAgents();
    } catch (err) {
      setStatus("error: " + err.message);
      return;
    }
    await loadRuns();
    if (!state.view) {
      newChat();
      return;
    }
    renderView();
    const last = state.view.runs[state.view.runs.length - 1];
    if (last && !last.done) {
      $("send-button").disabled = true;
      await follow(last);
    }
  }

  document.addEventListener("DOMContentLoaded", start);
})();
