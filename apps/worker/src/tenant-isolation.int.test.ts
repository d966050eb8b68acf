// The security suite: a job of workspace A attacks a running job of workspace B, on real worker
// processes and a real PostgreSQL. It runs twice: with bubblewrap, and on a worker whose PATH has
// no bwrap (whatever that worker then does, here its refusal to run jobs, is what is tested).
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import {
  createKeyring,
  createVariable,
  deployScript,
  getJob,
  listWorkers,
  runScriptByPath,
  waitForJob,
  type Membership,
} from "@millrace/core";
import { createTestMember, createTestServices, type TestServices } from "@millrace/core/testing";
import { startTestWorker, type TestWorker } from "./testing.ts";

const KEY = "tenant-isolation-test-key-0123456789abcdef";
const SECRET = `b-secret-${process.pid}-${Date.now()}`;
const BACKGROUND_MARKER = `4242.${process.pid}`;

// The attacker: everything a job could try to reach another tenant or the database, reported as
// its result. Python, so that it needs nothing but the interpreter.
const ATTACK = `import json, os, socket, struct, subprocess, time

def main(victim_job: str, job_root: str, pg_host: str, pg_port: int, pg_sockets: list, marker: str):
    me = os.getpid()
    found = {"environs": [], "cmdlines": [], "victim_dir": None, "job_root": None, "tcp": None, "sockets": {}}
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == me:
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                found["cmdlines"].append(f.read().replace(b"\\0", b" ").decode(errors="replace"))
        except Exception:
            pass
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                environ = f.read().replace(b"\\0", b" ").decode(errors="replace")
            # The sandbox's own processes (its init) hold this job's own variables.
            if os.environ["WM_TOKEN"] not in environ:
                found["environs"].append(environ)
        except Exception:
            pass
    for key, where in (("victim_dir", os.path.join(job_root, victim_job)), ("job_root", job_root)):
        try:
            found[key] = os.listdir(where)
        except Exception as e:
            found[key] = "refused: " + type(e).__name__
    # PostgreSQL over TCP: a startup message as user postgres; only AuthenticationOk would be a way in.
    try:
        s = socket.create_connection((pg_host, pg_port), timeout=3)
        body = b"user\\0postgres\\0database\\0postgres\\0\\0"
        s.sendall(struct.pack("!ii", 8 + len(body), 196608) + body)
        reply = s.recv(9)
        ok = len(reply) >= 9 and reply[0:1] == b"R" and struct.unpack("!i", reply[5:9])[0] == 0
        found["tcp"] = "authenticated" if ok else "no access: " + repr(reply[0:1])
    except Exception as e:
        found["tcp"] = "no access: " + type(e).__name__
    for path in pg_sockets:
        try:
            u = socket.socket(socket.AF_UNIX)
            u.connect(path)
            found["sockets"][path] = "connected"
        except Exception as e:
            found["sockets"][path] = "no access: " + type(e).__name__
    # Leave processes behind: one in a session of its own, one double-forked and orphaned.
    subprocess.Popen(["sleep", marker], start_new_session=True)
    if os.fork() == 0:
        if os.fork() == 0:
            os.setsid()
            os.execvp("sleep", ["sleep", marker])
        os._exit(0)
    time.sleep(0.3)
    return found
`;

// The victim: holds B's secret (a resolved $var: argument) and B's WM_TOKEN while it sleeps.
const VICTIM = 'secret="$1"\necho "victim running"\nsleep 6\necho "victim done"';

let services: TestServices;
let memberA: Membership;
let memberB: Membership;
const workers: TestWorker[] = [];
const jobRoot = path.join(os.tmpdir(), `millrace-tenant-jobs-${process.pid}`);
const noBwrapBin = path.join(os.tmpdir(), `millrace-no-bwrap-bin-${process.pid}`);

/** A folder of links to every command of the system's bin folders except bwrap: a PATH without it. */
function pathWithoutBwrap(): string {
  mkdirSync(noBwrapBin, { recursive: true });
  for (const dir of ["/usr/local/bin", "/usr/bin", "/usr/sbin"]) {
    for (const name of readdirSync(dir)) {
      if (name === "bwrap" || existsSync(path.join(noBwrapBin, name))) continue;
      symlinkSync(path.join(dir, name), path.join(noBwrapBin, name));
    }
  }
  return noBwrapBin;
}

function sleepersLeft(): string[] {
  const left: string[] = [];
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8");
      if (cmdline.includes(BACKGROUND_MARKER) && !/ Z /.test(readFileSync(`/proc/${pid}/stat`, "utf8")))
        left.push(`${pid}: ${cmdline.replaceAll("\0", " ")}`);
    } catch {
      // gone
    }
  }
  return left;
}

function databaseTargets() {
  const url = new URL(services.database.url);
  const socketDir = url.searchParams.get("host");
  const sockets = [
    ...(socketDir ? [path.join(socketDir, `.s.PGSQL.${url.port}`)] : []),
    `/tmp/.s.PGSQL.${url.port}`,
    "/var/run/postgresql/.s.PGSQL.5432",
    "/tmp/.s.PGSQL.5432",
  ];
  return { pg_host: "127.0.0.1", pg_port: Number(url.port), pg_sockets: sockets };
}

async function startVictim(tag: string): Promise<string> {
  const me = memberB.principal.username;
  await deployScript(services, memberB, {
    path: `u/${me}/victim_${tag}`,
    language: "bash",
    content: VICTIM,
    tag,
  });
  return runScriptByPath(services, memberB, `u/${me}/victim_${tag}`, { secret: `$var:u/${me}/secret` });
}

async function startAttack(tag: string, victim: string): Promise<string> {
  const me = memberA.principal.username;
  await deployScript(services, memberA, {
    path: `u/${me}/attack_${tag}`,
    language: "python3",
    content: ATTACK,
    tag,
  });
  return runScriptByPath(services, memberA, `u/${me}/attack_${tag}`, {
    victim_job: victim,
    job_root: jobRoot,
    marker: BACKGROUND_MARKER,
    ...databaseTargets(),
  });
}

describe("a job of one workspace reaches nothing of another, nor the database", () => {
  before(async () => {
    process.env.MILLRACE_SECRET_KEY = KEY;
    services = await createTestServices();
    ({ membership: memberA } = await createTestMember(services, "tenant-a"));
    ({ membership: memberB } = await createTestMember(services, "tenant-b"));
    const ctx = { ...services, secrets: createKeyring(KEY) };
    await createVariable(ctx, memberB, {
      path: `u/${memberB.principal.username}/secret`,
      value: SECRET,
      isSecret: true,
    });
    mkdirSync(jobRoot, { recursive: true });
  });
  after(async () => {
    await Promise.all(workers.map((w) => w.stop()));
    await services?.close();
    rmSync(noBwrapBin, { recursive: true, force: true });
    rmSync(jobRoot, { recursive: true, force: true });
  });

  describe("with bubblewrap", () => {
    before(async () => {
      workers.push(
        await startTestWorker(services.database.url, {
          WORKER_TAGS: "tenants",
          NUM_WORKERS: "2",
          JOB_DIR: jobRoot,
          MILLRACE_SECRET_KEY: KEY,
          WORKER_PING_INTERVAL: "1",
        }),
      );
    });

    it("the attacker sees no other job's environment, process, files or token, and no database", async () => {
      const victim = await startVictim("tenants");
      const deadline = Date.now() + 20_000;
      while ((await getJob(services, memberB, victim)).status !== "running") {
        assert.ok(Date.now() < deadline, "the victim started");
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const attack = await waitForJob(services, memberA, await startAttack("tenants", victim), 30_000);
      assert.equal(attack.status, "success", JSON.stringify(attack.result) + attack.logs);
      const found = attack.result as {
        environs: string[];
        cmdlines: string[];
        victim_dir: unknown;
        job_root: unknown;
        tcp: string;
        sockets: Record<string, string>;
      };
      const everything = JSON.stringify(found);
      assert.ok(!everything.includes(SECRET), "B's secret");
      assert.ok(!everything.includes(victim), "B's job id (its WM_JOB_ID, its folder)");
      assert.ok(!found.environs.some((env) => env.includes("WM_TOKEN")), "another process's WM_TOKEN");
      assert.ok(
        !found.cmdlines.some((line) => line.includes("victim") || line.includes("sleep 6")),
        "B's processes",
      );
      assert.match(String(found.victim_dir), /^refused/);
      // The sandbox shows the jobs' folder with the job's own folder in it, and nothing else.
      const attackId = attack.id;
      assert.ok(
        /^refused/.test(String(found.job_root)) ||
          JSON.stringify(found.job_root) === JSON.stringify([attackId]),
        `the jobs' folder showed ${JSON.stringify(found.job_root)}`,
      );
      assert.match(found.tcp, /^no access/);
      for (const [socket, outcome] of Object.entries(found.sockets))
        assert.match(outcome, /^no access/, socket);
      // What the attacker left running is gone with its job.
      const left = Date.now() + 3000;
      while (sleepersLeft().length > 0 && Date.now() < left) await new Promise((r) => setTimeout(r, 100));
      assert.deepEqual(sleepersLeft(), []);
      const victimJob = await waitForJob(services, memberB, victim, 30_000);
      assert.equal(victimJob.status, "success", victimJob.logs);
    });
  });

  describe("without bubblewrap on the worker's PATH", () => {
    let worker: TestWorker;
    before(async () => {
      worker = await startTestWorker(services.database.url, {
        PATH: pathWithoutBwrap(),
        WORKER_TAGS: "tenants-nobwrap",
        WORKER_NAME_PREFIX: `nobwrap-${process.pid}`,
        NUM_WORKERS: "2",
        JOB_DIR: jobRoot,
        MILLRACE_SECRET_KEY: KEY,
        WORKER_PING_INTERVAL: "1",
      });
      workers.push(worker);
    });

    it("the worker refuses to run jobs, says why, and reports it in the workers list", async () => {
      assert.match(worker.output(), /sandbox: unavailable \(bubblewrap \(bwrap\) not found on the PATH\)/);
      assert.match(worker.output(), /DISABLE_SANDBOX=true/);
      const ours = async () =>
        (await listWorkers(services, memberA.principal)).filter((w) =>
          w.worker.startsWith(`nobwrap-${process.pid}`),
        );
      // Its first ping follows its start lines.
      const deadline = Date.now() + 5000;
      while ((await ours()).length === 0 && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 100));
      const listed = await ours();
      assert.ok(listed.length > 0, "the worker is listed");
      for (const row of listed) {
        assert.match(row.sandbox, /^unavailable: /);
        assert.deepEqual(row.custom_tags, [], "it serves no tag");
      }
      const victim = await startVictim("tenants-nobwrap");
      const attack = await startAttack("tenants-nobwrap", victim);
      await new Promise((resolve) => setTimeout(resolve, 3000));
      assert.equal((await getJob(services, memberB, victim)).status, "queued");
      assert.equal((await getJob(services, memberA, attack)).status, "queued");
      assert.deepEqual(sleepersLeft(), []);
    });
  });
});
