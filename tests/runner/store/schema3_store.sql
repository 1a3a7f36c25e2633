BEGIN TRANSACTION;
CREATE TABLE statekit_charts (
            digest TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            version INTEGER NOT NULL,
            source TEXT,
            registered_at REAL NOT NULL
        );
INSERT INTO "statekit_charts" VALUES('sha256:8f47417f1684048d871254889561d47f847a34f130603a00552e761ef0c22a43','counter',1,'statechart: counter
version: 1
description: A counter whose every increment emits a message (for the runner''s tests).
context:
  total: {type: integer, default: 0}
  count: {type: integer, default: 0}
events:
  Incr: {by: integer}
  Ping: {}
guards:
  positive:
    if: event.by > 0
    else: NOT_POSITIVE
initial: open
states:
  open:
    already: [Ping]
    on:
      Incr:
        guard: positive
        do:
          - assign: {total: ctx.total + event.by, count: ctx.count + 1}
          - emit: {type: Counted, payload: {total: ctx.total, by: event.by}}
',1.79613481505096673962e+09);
INSERT INTO "statekit_charts" VALUES('sha256:3ab1b4f5aa1d115ab199dde4977cfe251bdb7c292f31b1b9f1987db8a03dca5b','facts',1,'statechart: facts
version: 1
description: A task whose start and payments are facts with business keys (idempotency).
context:
  attempt: {type: integer, default: 0}
  worker: {type: string, nullable: true, default: null}
  paid: {type: integer, default: 0}
events:
  TaskStarted: {attempt: integer, worker: string}
  PAY_SUCCESS: {channel_ref: string, amount: integer}
  Heartbeat: {attempt: integer}
idempotency:
  TaskStarted: [attempt]
  PAY_SUCCESS: [channel_ref]
  Heartbeat: [attempt]
initial: queued
states:
  queued:
    on:
      TaskStarted:
        to: running
        do:
          - assign: {attempt: event.attempt, worker: event.worker}
          - emit: {type: Started, payload: {attempt: event.attempt}}
  running:
    already: [Heartbeat]
    reject: {TaskStarted: ALREADY_RUNNING}
    on:
      PAY_SUCCESS:
        do:
          - assign: {paid: ctx.paid + event.amount}
          - emit: {type: Paid, payload: {amount: event.amount}}
',1.79613481510900378224e+09);
CREATE TABLE statekit_events (
            instance_id TEXT NOT NULL,
            sequence BIGINT NOT NULL CHECK (sequence >= 1),
            event_id TEXT NOT NULL,
            type TEXT NOT NULL,
            payload TEXT NOT NULL,
            payload_sha256 TEXT NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('APPLIED', 'ALREADY_APPLIED')),
            chart_version INTEGER NOT NULL,
            evidence TEXT NOT NULL,
            recorded_at REAL NOT NULL, idempotency_key TEXT,
            PRIMARY KEY (instance_id, sequence),
            UNIQUE (instance_id, event_id)
        );
INSERT INTO "statekit_events" VALUES('c',1,'e1','Incr','{"by":2}','cdcaa4fd4e9b57f9908cbef23596e5a1454b7fed617d85abe3cf56c596f746c6','APPLIED',1,'{"microsteps":[{"changes":[["total",0,2],["count",0,1]],"emitted":["e1/0"],"entered":[],"event":"Incr","exited":[],"payload":{"by":2},"raised":[],"transitions":[{"id":0,"kind":"event","source":"open","targets":[]}]}]}',1.79613481507333827016e+09,NULL);
INSERT INTO "statekit_events" VALUES('c',2,'e2','Ping','{}','b21b989a9941b57341d86e7809b2b7729a2fa38268d17829cdd05dba4141716f','ALREADY_APPLIED',1,'{"microsteps":[]}',1.79613481507735705373e+09,NULL);
INSERT INTO "statekit_events" VALUES('c',3,'e4','Incr','{"by":3}','f2ff2cb02d7624669d327419c1944933085fa69a1467d8e289e647dd456ff31b','APPLIED',1,'{"microsteps":[{"changes":[["total",2,5],["count",1,2]],"emitted":["e4/0"],"entered":[],"event":"Incr","exited":[],"payload":{"by":3},"raised":[],"transitions":[{"id":0,"kind":"event","source":"open","targets":[]}]}]}',1.79613481509402823444e+09,NULL);
INSERT INTO "statekit_events" VALUES('t',1,'f1','TaskStarted','{"attempt":1,"worker":"w-1"}','1eb76592435c027762f34b39ad3372f10a77a5378421a82360a5ed47923848c2','APPLIED',1,'{"microsteps":[{"changes":[["attempt",0,1],["worker",null,"w-1"]],"emitted":["f1/0"],"entered":["running"],"event":"TaskStarted","exited":["queued"],"payload":{"attempt":1,"worker":"w-1"},"raised":[],"transitions":[{"id":0,"kind":"event","source":"queued","targets":["running"]}]}]}',1.79613481512315487859e+09,'[1]');
INSERT INTO "statekit_events" VALUES('t',2,'f3','PAY_SUCCESS','{"amount":7,"channel_ref":"r-1"}','c3c03e2046ed563cddde56648a48b245bfae9402192b3bf39e6816b3508b499e','APPLIED',1,'{"microsteps":[{"changes":[["paid",0,7]],"emitted":["f3/0"],"entered":[],"event":"PAY_SUCCESS","exited":[],"payload":{"amount":7,"channel_ref":"r-1"},"raised":[],"transitions":[{"id":1,"kind":"event","source":"running","targets":[]}]}]}',1.79613481513898587231e+09,'["r-1"]');
CREATE TABLE statekit_inbox (
            consumer TEXT NOT NULL,
            instance_id TEXT NOT NULL,
            message_id TEXT NOT NULL,
            processed_at REAL NOT NULL,
            PRIMARY KEY (consumer, instance_id, message_id)
        );
CREATE TABLE statekit_instances (
            instance_id TEXT PRIMARY KEY,
            chart_name TEXT NOT NULL,
            chart_version INTEGER NOT NULL,
            chart_digest TEXT NOT NULL,
            version BIGINT NOT NULL CHECK (version >= 0),
            configuration TEXT NOT NULL,
            context TEXT NOT NULL,
            history TEXT NOT NULL,
            initial_context TEXT NOT NULL,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL
        );
INSERT INTO "statekit_instances" VALUES('c','counter',1,'sha256:8f47417f1684048d871254889561d47f847a34f130603a00552e761ef0c22a43',3,'["open"]','{"count":2,"total":5}','{}','{}',1.79613481505976915362e+09,1.79613481509402823444e+09);
INSERT INTO "statekit_instances" VALUES('t','facts',1,'sha256:3ab1b4f5aa1d115ab199dde4977cfe251bdb7c292f31b1b9f1987db8a03dca5b',2,'["running"]','{"attempt":1,"paid":7,"worker":"w-1"}','{}','{}',1.79613481512146449092e+09,1.79613481513898587231e+09);
CREATE TABLE statekit_outbox (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            instance_id TEXT NOT NULL,
            message_id TEXT NOT NULL,
            sequence BIGINT NOT NULL,
            type TEXT NOT NULL,
            payload TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'pending'
                CHECK (status IN ('pending', 'delivered', 'dead')),
            attempts INTEGER NOT NULL DEFAULT 0,
            next_attempt_at REAL NOT NULL DEFAULT 0,
            claimed_by TEXT,
            claimed_until REAL,
            last_error TEXT,
            created_at REAL NOT NULL,
            delivered_at REAL,
            UNIQUE (instance_id, message_id)
        );
INSERT INTO "statekit_outbox" VALUES(1,'c','e1/0',1,'Counted','{"by":2,"total":2}','pending',0,0.0,NULL,NULL,NULL,1.79613481507333827016e+09,NULL);
INSERT INTO "statekit_outbox" VALUES(2,'c','e4/0',3,'Counted','{"by":3,"total":5}','pending',0,0.0,NULL,NULL,NULL,1.79613481509402823444e+09,NULL);
INSERT INTO "statekit_outbox" VALUES(3,'t','f1/0',1,'Started','{"attempt":1}','pending',0,0.0,NULL,NULL,NULL,1.79613481512315487859e+09,NULL);
INSERT INTO "statekit_outbox" VALUES(4,'t','f3/0',2,'Paid','{"amount":7}','pending',0,0.0,NULL,NULL,NULL,1.79613481513898587231e+09,NULL);
CREATE TABLE statekit_rejections (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            instance_id TEXT NOT NULL,
            event_id TEXT NOT NULL,
            type TEXT NOT NULL,
            payload TEXT NOT NULL,
            payload_sha256 TEXT NOT NULL,
            status TEXT NOT NULL,
            reason TEXT NOT NULL,
            message TEXT,
            version BIGINT NOT NULL,
            detail TEXT NOT NULL,
            recorded_at REAL NOT NULL
        );
INSERT INTO "statekit_rejections" VALUES(1,'c','e3','Incr','{"by":-1}','eef09d057d03951f6a1fa96e85a3b1dc5f281544889864cb9320aa55d7aeac68','REJECTED','NOT_POSITIVE','guard ''positive'' of Incr from ''open'' failed: event.by > 0',2,'{}',1.79613481508544111254e+09);
INSERT INTO "statekit_rejections" VALUES(2,'c','e1','Incr','{"by":5}','731554eb6ae14055effd12aa5932c996a5863adc9ae6f25885238f3a62b696ba','CONFLICT','EVENT_ID_PAYLOAD_CONFLICT','event ''e1'' was recorded at sequence 1 with another payload; nothing applied',2,'{"event_id":"e1","expected_version":null,"reason":"EVENT_ID_PAYLOAD_CONFLICT","sequence":1,"version":2}',1.79613481509338760375e+09);
INSERT INTO "statekit_rejections" VALUES(3,'t','f2','TaskStarted','{"attempt":1,"worker":"w-1"}','1eb76592435c027762f34b39ad3372f10a77a5378421a82360a5ed47923848c2','ALREADY_APPLIED','DUPLICATE_FACT','this TaskStarted (key [1]) was recorded by event ''f1'' at sequence 1',1,'{"event_id":"f1","expected_version":null,"reason":"DUPLICATE_FACT","sequence":1,"version":1}',1.79613481513741278646e+09);
CREATE TABLE statekit_schema_migrations (version INTEGER PRIMARY KEY, description TEXT NOT NULL, applied_at REAL NOT NULL);
INSERT INTO "statekit_schema_migrations" VALUES(1,'instances, events, rejections, outbox, snapshots, inbox, charts',1.79613481501843190194e+09);
INSERT INTO "statekit_schema_migrations" VALUES(2,'every stored integer is 64-bit (chart versions, outbox attempts)',1.79613481501844906803e+09);
INSERT INTO "statekit_schema_migrations" VALUES(3,'business idempotency keys: (instance, event type, key) unique among accepted events',1.79613481501869773869e+09);
CREATE TABLE statekit_snapshots (
            instance_id TEXT NOT NULL,
            through_sequence BIGINT NOT NULL,
            state TEXT NOT NULL,
            state_sha256 TEXT NOT NULL,
            chart_digest TEXT NOT NULL,
            chart_version INTEGER NOT NULL,
            engine_version TEXT NOT NULL,
            created_at REAL NOT NULL,
            PRIMARY KEY (instance_id, through_sequence)
        );
INSERT INTO "statekit_snapshots" VALUES('c',2,'{"configuration":["open"],"context":{"count":1,"total":2},"digest":"sha256:8f47417f1684048d871254889561d47f847a34f130603a00552e761ef0c22a43","format":1,"history":{},"statechart":"counter","version":1}','065e8c0b2be29ab20d5a8b321307e8a6f08083470881ec5f99f15077cc15d5fc','sha256:8f47417f1684048d871254889561d47f847a34f130603a00552e761ef0c22a43',1,'statekit-0.1.0/state-1',1.79613481507735705373e+09);
CREATE INDEX statekit_rejections_instance ON statekit_rejections (instance_id, id);
CREATE INDEX statekit_outbox_pending ON statekit_outbox (instance_id, id) WHERE status = 'pending';
CREATE INDEX statekit_outbox_status ON statekit_outbox (status, id);
CREATE UNIQUE INDEX statekit_events_idempotency ON statekit_events (instance_id, type, idempotency_key) WHERE idempotency_key IS NOT NULL;
DELETE FROM "sqlite_sequence";
INSERT INTO "sqlite_sequence" VALUES('statekit_outbox',4);
INSERT INTO "sqlite_sequence" VALUES('statekit_rejections',3);
COMMIT;
