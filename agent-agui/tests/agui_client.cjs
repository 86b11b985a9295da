// Drives eugene's AG-UI endpoint with the official client (@ag-ui/client's HttpAgent) and checks
// every event it receives against @ag-ui/core's own schemas. Run by tests/agui_client.rs:
//   node agui_client.cjs <url> <token> <thread> '<turns as JSON>'
// Each turn is {"message": text}, {"message": null, "content": [parts]} or {"resume": "approve" | "deny" | "extra" | "tampered" |
// "again" | "deny-again"}: "again" sends the last "approve" or "deny" resume once more,
// "deny-again" denies what it answered.
// Prints one JSON object: per turn the events, the schema failures, the client's error, the
// pending interrupts after it, and the thread's messages as the client assembled them.
const { HttpAgent } = require("@ag-ui/client");
const { EventSchema } = require("@ag-ui/core/schemas");

const [url, token, threadId, turnsJson] = process.argv.slice(2);
const turns = JSON.parse(turnsJson);

let lastAnswer = null;

function answers(kind, pending) {
  const approve = (id) => ({ interruptId: id, status: "resolved", payload: { approved: true } });
  switch (kind) {
    case "approve":
      return pending.map((i) => approve(i.id));
    case "deny":
      return pending.map((i) => ({
        interruptId: i.id,
        status: "resolved",
        payload: { approved: false, reason: "not today" },
      }));
    case "extra": {
      const digest = pending[0].id.split("#").pop();
      return [...pending.map((i) => approve(i.id)), approve(`not-pending#${digest}`)];
    }
    case "tampered":
      return pending.map((i) => approve(i.id.replace(/#[0-9a-f]{64}@/, "#" + "0".repeat(64) + "@")));
    case "again":
      return lastAnswer;
    case "deny-again":
      return lastAnswer.map((e) => ({
        interruptId: e.interruptId,
        status: "resolved",
        payload: { approved: false },
      }));
    default:
      throw new Error(`unknown resume kind ${kind}`);
  }
}

async function main() {
  const agent = new HttpAgent({ url, threadId, headers: { Authorization: `Bearer ${token}` } });
  const report = [];
  let n = 0;
  for (const turn of turns) {
    const events = [];
    const invalid = [];
    let error = null;
    const subscriber = {
      onEvent({ event }) {
        events.push(event);
        const checked = EventSchema.safeParse(event);
        if (!checked.success) invalid.push({ type: event.type, issues: checked.error.issues });
      },
    };
    try {
      if (turn.message !== undefined || turn.content !== undefined) {
        n += 1;
        agent.addMessage({ id: `user-${n}`, role: "user", content: turn.content ?? turn.message });
        await agent.runAgent({}, subscriber);
      } else {
        const resume = answers(turn.resume, agent.pendingInterrupts);
        if (turn.resume === "approve" || turn.resume === "deny") lastAnswer = resume;
        // A forged answer would be refused by the client itself (its ids must cover the pending
        // ones): forget them, as a client that does not check would, so the server is asked.
        // ("again" and "deny-again" may answer a pause the client no longer has, which the
        // client would refuse to send: it forgets its pending interrupts for them too.)
        const pending = agent.pendingInterrupts;
        const unchecked = ["tampered", "again", "deny-again"].includes(turn.resume);
        if (unchecked) agent.pendingInterrupts = [];
        try {
          await agent.runAgent({ resume }, subscriber);
        } finally {
          if (unchecked) agent.pendingInterrupts = pending;
        }
      }
    } catch (e) {
      error = String(e && e.message ? e.message : e);
    }
    report.push({ events, invalid, error, pending: agent.pendingInterrupts });
  }
  process.stdout.write(JSON.stringify({ turns: report, messages: agent.messages }));
}

main().catch((e) => {
  process.stderr.write(String(e && e.stack ? e.stack : e));
  process.exit(1);
});
