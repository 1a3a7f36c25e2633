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
',1.7961445980674421787e+09);
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
',1.79614459816031670565e+09);
INSERT INTO "statekit_charts" VALUES('sha256:f49ff2c672153f1fb6b1dfbaf7e71b25c3501989a16b6f88a725c23f75009483','lease',1,'statechart: lease
version: 1
description: A lease for the timer tests (an after timer, delayed and undelayed sends).
context:
  beats: {type: integer, default: 0}
  reminders: {type: integer, default: 0}
  expired: {type: boolean, default: false}
  allow_expiry: {type: boolean, default: true}
  deadline: {type: integer, default: 0}
events:
  Start: {}
  Beat: {}
  Hold: {}
  Snooze: {}
  Finish: {}
  Odd: {}
  Remind: {n: integer}
  Echo: {n: integer}
  Noted: {n: integer}
  Deadline: {at: integer}
guards:
  expiry_allowed:
    if: ctx.allow_expiry
    else: EXPIRY_HELD
initial: idle
states:
  idle:
    after:
      1d: stale
    on:
      Start: running
      Deadline: {to: pinned, do: [{assign: {deadline: event.at}}]}
  running:
    entry:
      - send: {event: Remind, payload: {n: 1}, delay: 10s, id: reminder}
    after:
      30s: {to: expired, guard: expiry_allowed, do: [{assign: {expired: true}}]}
    on:
      Beat: {to: running, do: [{assign: {beats: ctx.beats + 1}}]}
      Hold: {do: [{assign: {allow_expiry: false}}]}
      Snooze: {do: [{send: {event: Remind, payload: {n: 2}, delay: 1m, id: reminder}}]}
      Finish: {to: done, do: [{cancel: reminder}]}
      Remind: {do: [{assign: {reminders: ctx.reminders + 1}}]}
      Echo:
        do:
          - send: {event: Noted, payload: {n: event.n}}
          - send: {event: Odd}
          - send: {event: Beat}
      Noted: {do: [{emit: {type: NotedIt, payload: {n: event.n}}}]}
  pinned:
    after:
      - at: ctx.deadline
        to: done
  stale:
    on:
      Start: running
  expired:
    on:
      Start: running
  done:
    final: true
',1.79614459820366740225e+09);
CREATE TABLE "statekit_events" (
        instance_id TEXT NOT NULL,
        sequence BIGINT NOT NULL CHECK (sequence >= 1),
        event_id TEXT NOT NULL,
        type TEXT NOT NULL,
        payload TEXT NOT NULL,
        payload_sha256 TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('APPLIED', 'ALREADY_APPLIED', 'REJECTED')),
        chart_version INTEGER NOT NULL,
        evidence TEXT NOT NULL,
        recorded_at REAL NOT NULL,
        idempotency_key TEXT,
        clock_ms BIGINT,
        PRIMARY KEY (instance_id, sequence),
        UNIQUE (instance_id, event_id)
    );
INSERT INTO "statekit_events" VALUES('c',1,'e1','Incr','{"by":2}',X'CDCAA4FD4E9B57F9908CBEF23596E5A1454B7FED617D85ABE3CF56C596F746C6','APPLIED',1,'[2,[["Incr",{"by":2},[[0,"open",[],"event"]],[],[],[["total",0,2],["count",0,1]],1,[]]]]',1.79614459807813405985e+09,NULL,1796144598078);
INSERT INTO "statekit_events" VALUES('c',2,'e2','Ping','{}',X'B21B989A9941B57341D86E7809B2B7729A2FA38268D17829CDD05DBA4141716F','ALREADY_APPLIED',1,'[2,[]]',1.79614459808129835129e+09,NULL,1796144598081);
INSERT INTO "statekit_events" VALUES('c',3,'e5','Incr','{"by":3}',X'F2FF2CB02D7624669D327419C1944933085FA69A1467D8E289E647DD456FF31B','APPLIED',1,'[2,[["Incr",{"by":3},[[0,"open",[],"event"]],[],[],[["total",2,5],["count",1,2]],1,[]]]]',1.79614459810529398923e+09,NULL,1796144598105);
INSERT INTO "statekit_events" VALUES('c',4,'e6','Incr','{"by":1}',X'82577311532A4564ABF722F8A1371E7138CD61EF1B744E84784FFA57FAC5BEEB','APPLIED',1,'[2,[["Incr",{"by":1},[[0,"open",[],"event"]],[],[],[["total",5,6],["count",2,3]],1,[]]]]',1.79614459810930848122e+09,NULL,1796144598109);
INSERT INTO "statekit_events" VALUES('t',1,'f1','TaskStarted','{"attempt":1,"worker":"w-1"}',X'1EB76592435C027762F34B39AD3372F10A77A5378421A82360A5ED47923848C2','APPLIED',1,'[2,[["TaskStarted",{"attempt":1,"worker":"w-1"},[[0,"queued",["running"],"event"]],["queued"],["running"],[["attempt",0,1],["worker",null,"w-1"]],1,[]]]]',1.79614459817736458772e+09,'[1]',1796144598177);
INSERT INTO "statekit_events" VALUES('t',2,'f3','PAY_SUCCESS','{"amount":7,"channel_ref":"r-1"}',X'C3C03E2046ED563CDDDE56648A48B245BFAE9402192B3BF39E6816B3508B499E','APPLIED',1,'[2,[["PAY_SUCCESS",{"amount":7,"channel_ref":"r-1"},[[1,"running",[],"event"]],[],[],[["paid",0,7]],1,[]]]]',1.7961445981852729321e+09,'["r-1"]',1796144598185);
INSERT INTO "statekit_events" VALUES('a',1,'l1','Start','{}',X'9894831228C3D7B53C155E38195414C73FFE3ACE199541444D725C6413B2A09E','APPLIED',1,'[2,[["Start",{},[[0,"idle",["running"],"event"]],["idle"],["running"],[],0,[],{"armed":["reminder","after(30s)@running"],"cancelled":["after(1d)@idle"]}]]]',1.79614459821731066706e+09,NULL,1700000000000);
INSERT INTO "statekit_events" VALUES('a',2,'l2','Echo','{"n":4}',X'4A1F1EBF21AB6D1781C681F2D71B2BCDCC89596313430E9B5A6E9FC13C7AEA75','APPLIED',1,'[2,[["Echo",{"n":4},[[8,"running",[],"event"]],[],[],[],0,[],{"sent":["Noted","Odd","Beat"]}]]]',1.79614459822097158434e+09,NULL,1700000000000);
INSERT INTO "statekit_events" VALUES('a',3,'statekit.send/l2/1','Noted','{"n":4}',X'709ACD8E1D14C27D4DACD835DDF2DC1C5952E9FA4F766898AE8CAA43880A53E9','APPLIED',1,'[2,[["Noted",{"n":4},[[9,"running",[],"event"]],[],[],[],1,[]]]]',1.79614459822097158434e+09,NULL,1700000000000);
INSERT INTO "statekit_events" VALUES('a',4,'statekit.send/l2/3','Beat','{}',X'BD196F31415D041C9531AD094F86349F689E4B846CA3DC6E901B167BD5C744CC','APPLIED',1,'[2,[["Beat",{},[[3,"running",["running"],"event"]],["running"],["running"],[["beats",0,1]],0,[],{"armed":["reminder","after(30s)@running"],"cancelled":["after(30s)@running","reminder"]}]]]',1.79614459822097158434e+09,NULL,1700000000000);
INSERT INTO "statekit_events" VALUES('a',5,'statekit.timer/reminder/4','Remind','{"n":1}',X'4B760DBAC53726216567AE4D6C7ECC5F712895184E36D79B0FFE55A3CD00EAB0','APPLIED',1,'[2,[["Remind",{"n":1},[[7,"running",[],"event"]],[],[],[["reminders",0,1]],0,[]]]]',1.79614459822548866267e+09,NULL,1700000011000);
CREATE TABLE statekit_inbox (
            consumer TEXT NOT NULL,
            instance_id TEXT NOT NULL,
            message_id TEXT NOT NULL,
            processed_at REAL NOT NULL,
            PRIMARY KEY (consumer, instance_id, message_id)
        );
INSERT INTO "statekit_inbox" VALUES('billing','c','e1/0',1.79614459814587235455e+09);
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
        , timers TEXT, start_clock_ms BIGINT);
INSERT INTO "statekit_instances" VALUES('c','counter',1,'sha256:8f47417f1684048d871254889561d47f847a34f130603a00552e761ef0c22a43',4,'["open"]','{"count":3,"total":6}','{}','{}',1.7961445980774846077e+09,1.79614459810930848122e+09,NULL,1796144598077);
INSERT INTO "statekit_instances" VALUES('t','facts',1,'sha256:3ab1b4f5aa1d115ab199dde4977cfe251bdb7c292f31b1b9f1987db8a03dca5b',2,'["running"]','{"attempt":1,"paid":7,"worker":"w-1"}','{}','{}',1.79614459816951012611e+09,1.7961445981852729321e+09,NULL,1796144598169);
INSERT INTO "statekit_instances" VALUES('a','lease',1,'sha256:f49ff2c672153f1fb6b1dfbaf7e71b25c3501989a16b6f88a725c23f75009483',5,'["running"]','{"allow_expiry":true,"beats":1,"deadline":0,"expired":false,"reminders":1}','{}','{}',1.79614459821163678166e+09,1.79614459822548866267e+09,'{"timer_generation":5,"timers":[{"delay_ms":30000,"due_ms":1700000030000,"event":"after(30s)@running","generation":5,"id":"after(30s)@running","owner":"running","payload":{}}]}',1700000000000);
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
INSERT INTO "statekit_outbox" VALUES(1,'c','e1/0',1,'Counted','{"by":2,"total":2}','delivered',1,1.7961445981219205856e+09,NULL,NULL,NULL,1.79614459807813405985e+09,1.7961445981219205856e+09);
INSERT INTO "statekit_outbox" VALUES(2,'c','e5/0',3,'Counted','{"by":3,"total":5}','dead',1,1.79614459814148187634e+09,NULL,NULL,'RuntimeError: the consumer is down',1.79614459810529398923e+09,NULL);
INSERT INTO "statekit_outbox" VALUES(3,'c','e6/0',4,'Counted','{"by":1,"total":6}','pending',0,0.0,NULL,NULL,NULL,1.79614459810930848122e+09,NULL);
INSERT INTO "statekit_outbox" VALUES(4,'t','f1/0',1,'Started','{"attempt":1}','pending',0,0.0,NULL,NULL,NULL,1.79614459817736458772e+09,NULL);
INSERT INTO "statekit_outbox" VALUES(5,'t','f3/0',2,'Paid','{"amount":7}','pending',0,0.0,NULL,NULL,NULL,1.7961445981852729321e+09,NULL);
INSERT INTO "statekit_outbox" VALUES(6,'a','statekit.send/l2/1/0',3,'NotedIt','{"n":4}','pending',0,0.0,NULL,NULL,NULL,1.79614459822097158434e+09,NULL);
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
INSERT INTO "statekit_rejections" VALUES(1,'c','e3','Incr','{"by":0}','b5a4ac19858055c991f218005b93fb68350f6a453e79fcd2e39684842188ad6a','REJECTED','NOT_POSITIVE','guard ''positive'' of Incr from ''open'' failed: event.by > 0',2,'{}',1.79614459808526515964e+09);
INSERT INTO "statekit_rejections" VALUES(2,'c','e1','Incr','{"by":5}','731554eb6ae14055effd12aa5932c996a5863adc9ae6f25885238f3a62b696ba','CONFLICT','EVENT_ID_PAYLOAD_CONFLICT','event ''e1'' was recorded at sequence 1 with another payload; nothing applied',2,'{"event_id":"e1","expected_version":null,"reason":"EVENT_ID_PAYLOAD_CONFLICT","sequence":1,"version":2}',1.79614459809331440927e+09);
INSERT INTO "statekit_rejections" VALUES(3,'c','e4','Incr','{"by":1}','82577311532a4564abf722f8a1371e7138cd61ef1b744e84784ffa57fac5beeb','CONFLICT','DUPLICATE_OR_OLD_SEQUENCE','sequence 1 is taken by event ''e1''',2,'{"event_id":"e1","expected_version":0,"reason":"DUPLICATE_OR_OLD_SEQUENCE","sequence":1,"version":2}',1.79614459810130620009e+09);
INSERT INTO "statekit_rejections" VALUES(4,'t','f2','TaskStarted','{"attempt":1,"worker":"w-1"}','1eb76592435c027762f34b39ad3372f10a77a5378421a82360a5ed47923848c2','ALREADY_APPLIED','DUPLICATE_FACT','this TaskStarted (key [1]) was recorded by event ''f1'' at sequence 1',1,'{"event_id":"f1","expected_version":null,"reason":"DUPLICATE_FACT","sequence":1,"version":1}',1.79614459818136072157e+09);
INSERT INTO "statekit_rejections" VALUES(5,'a','statekit.send/l2/2','Odd','{}','6164a80f1a1d2bd9d8549d5cd44929a5f1897e4828d5be41f4e93cd5737b15e6','REJECTED','UNDEFINED_TRANSITION','no transition for Odd in running',3,'{}',1.79614459822097158434e+09);
CREATE TABLE statekit_schema_migrations (version INTEGER PRIMARY KEY, description TEXT NOT NULL, applied_at REAL NOT NULL);
INSERT INTO "statekit_schema_migrations" VALUES(1,'instances, events, rejections, outbox, snapshots, inbox, charts',1.7961445980306360721e+09);
INSERT INTO "statekit_schema_migrations" VALUES(2,'every stored integer is 64-bit (chart versions, outbox attempts)',1.79614459803065323831e+09);
INSERT INTO "statekit_schema_migrations" VALUES(3,'business idempotency keys: (instance, event type, key) unique among accepted events',1.79614459803087162968e+09);
INSERT INTO "statekit_schema_migrations" VALUES(4,'durable timers: the timers table, each event''s clock reading, consumed timer deliveries',1.79614459803214740756e+09);
INSERT INTO "statekit_schema_migrations" VALUES(5,'events: the payload hash as 32 bytes; new evidence in the compact form',1.79614459803217744833e+09);
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
INSERT INTO "statekit_snapshots" VALUES('c',2,'{"configuration":["open"],"context":{"count":1,"total":2},"digest":"sha256:8f47417f1684048d871254889561d47f847a34f130603a00552e761ef0c22a43","format":1,"history":{},"statechart":"counter","version":1}','065e8c0b2be29ab20d5a8b321307e8a6f08083470881ec5f99f15077cc15d5fc','sha256:8f47417f1684048d871254889561d47f847a34f130603a00552e761ef0c22a43',1,'statekit-0.1.0/state-1',1.79614459808129835129e+09);
INSERT INTO "statekit_snapshots" VALUES('c',4,'{"configuration":["open"],"context":{"count":3,"total":6},"digest":"sha256:8f47417f1684048d871254889561d47f847a34f130603a00552e761ef0c22a43","format":1,"history":{},"statechart":"counter","version":1}','bfb8a719c63fe26bcb63a9a69d70f7f60315b7af54c2466e54bbcf6255d82086','sha256:8f47417f1684048d871254889561d47f847a34f130603a00552e761ef0c22a43',1,'statekit-0.1.0/state-1',1.79614459810930848122e+09);
CREATE TABLE statekit_timers (
        instance_id TEXT NOT NULL,
        timer_id TEXT NOT NULL,
        generation BIGINT NOT NULL,
        event TEXT NOT NULL,
        payload TEXT NOT NULL,
        due_ms BIGINT NOT NULL,
        sequence BIGINT NOT NULL,
        PRIMARY KEY (instance_id, timer_id)
    );
INSERT INTO "statekit_timers" VALUES('a','after(30s)@running',5,'after(30s)@running','{}',1700000030000,4);
CREATE INDEX statekit_rejections_instance ON statekit_rejections (instance_id, id);
CREATE INDEX statekit_outbox_pending ON statekit_outbox (instance_id, id) WHERE status = 'pending';
CREATE INDEX statekit_outbox_status ON statekit_outbox (status, id);
CREATE INDEX statekit_timers_due ON statekit_timers (due_ms, generation);
CREATE UNIQUE INDEX statekit_events_idempotency ON statekit_events (instance_id, type, idempotency_key) WHERE idempotency_key IS NOT NULL;
DELETE FROM "sqlite_sequence";
INSERT INTO "sqlite_sequence" VALUES('statekit_outbox',6);
INSERT INTO "sqlite_sequence" VALUES('statekit_rejections',5);
COMMIT;
