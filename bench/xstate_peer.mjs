// XState 5's side of bench/xstate_peer.py (copied next to the npm install it imports).
//
// Reads one JSON request on stdin: {transitions: [[event, source, target], ...],
// guarded: bool, events: [[type, n or null], ...], mode: "trace" | "time", warm, runs}.
// Builds the flat chart (or the guarded one: a `within_limit` guard and an assign of
// `count + n` on every transition, as bench/hand_flat.py's chart), then
//   trace: sends every event to one actor and writes [[state value, count], ...];
//   time:  `warm` untimed passes, then `runs` timed passes over the whole stream, each
//          through a new `createActor(machine).start()` made before its timed loop;
//          writes the events/s of each timed pass, in CPU time of the process
//          (`process.cpuUsage`, as Python's `time.process_time`).
import { assign, createActor, createMachine } from "xstate";

function machineOf(transitions, guarded) {
  const states = {};
  for (const [event, source, target] of transitions) {
    states[source] ??= { on: {} };
    states[target] ??= { on: {} };
    states[source].on[event] = guarded
      ? { target, guard: "within_limit", actions: "add" }
      : target;
  }
  if (!guarded) {
    return createMachine({ id: "flat", initial: "idle", states });
  }
  return createMachine(
    {
      id: "flat_guarded",
      initial: "idle",
      context: { count: 0, limit: 1000000000 },
      states,
    },
    {
      guards: {
        within_limit: ({ context, event }) =>
          event.n > 0 && context.count + event.n <= context.limit,
      },
      actions: {
        add: assign({ count: ({ context, event }) => context.count + event.n }),
      },
    },
  );
}

function eventsOf(pairs) {
  return pairs.map(([type, n]) => (n === null ? { type } : { type, n }));
}

function trace(machine, events) {
  const actor = createActor(machine).start();
  const out = [];
  for (const event of events) {
    actor.send(event);
    const snapshot = actor.getSnapshot();
    out.push([snapshot.value, snapshot.context?.count ?? null]);
  }
  return out;
}

function pass(machine, events) {
  const actor = createActor(machine).start();
  const began = process.cpuUsage();
  for (let i = 0; i < events.length; i++) {
    actor.send(events[i]);
  }
  const used = process.cpuUsage(began);
  return events.length / ((used.user + used.system) / 1e6);
}

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const request = JSON.parse(Buffer.concat(chunks).toString("utf8"));
const machine = machineOf(request.transitions, request.guarded);
const events = eventsOf(request.events);
if (request.mode === "trace") {
  process.stdout.write(JSON.stringify(trace(machine, events)));
} else {
  for (let i = 0; i < request.warm; i++) pass(machine, events);
  const rates = [];
  for (let i = 0; i < request.runs; i++) rates.push(pass(machine, events));
  process.stdout.write(JSON.stringify(rates));
}
