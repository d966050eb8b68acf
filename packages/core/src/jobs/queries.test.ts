import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { AppError } from "../errors.ts";
import { checkJobListParams, parseDateTime, parseJobListQuery, type JobListQuery } from "./queries.ts";

function refused(query: JobListQuery, field: string, pattern: RegExp) {
  assert.throws(
    () => parseJobListQuery(query),
    (error: unknown) => {
      assert.ok(error instanceof AppError, String(error));
      assert.equal(error.code, "INVALID_INPUT");
      assert.equal(error.field, field);
      assert.match(error.message, pattern);
      assert.ok(error.message.startsWith(`${field}: `), error.message);
      return true;
    },
  );
}

describe("parseJobListQuery", () => {
  it("reads Windmill's parameters", () => {
    assert.deepEqual(
      parseJobListQuery({
        script_path_exact: "f/a/x,f/a/y",
        script_path_start: "!u/bob/",
        created_by: "alice",
        tag: "!gpu,!highmem",
        job_kinds: "script,dependencies",
        running: "false",
        success: "true",
        status: "failure",
        created_before: "2025-02-01T00:00:00Z",
        created_after: "2025-01-01",
        order_desc: "false",
        page: "3",
        per_page: "100",
      }),
      {
        scriptPathExact: { in: ["f/a/x", "f/a/y"] },
        scriptPathStart: { notIn: ["u/bob/"] },
        createdBy: { in: ["alice"] },
        tag: { notIn: ["gpu", "highmem"] },
        jobKinds: { in: ["script", "dependencies"] },
        running: false,
        success: true,
        status: "failure",
        createdBefore: new Date("2025-02-01T00:00:00Z"),
        createdAfter: new Date("2025-01-01T00:00:00Z"),
        orderDesc: false,
        page: 3,
        perPage: 100,
      },
    );
  });

  it("treats empty and missing values as absent", () => {
    assert.deepEqual(parseJobListQuery({ tag: "", created_by: null, page: "  " }), {});
  });

  it("refuses bad values naming the parameter", () => {
    refused({ created_before: "yesterday" }, "created_before", /not a valid date-time/);
    refused({ created_after: "2025-13-45T99:00:00Z" }, "created_after", /not a valid date-time/);
    refused({ running: "yes" }, "running", /true or false/);
    refused({ success: "1" }, "success", /true or false/);
    refused({ page: "0" }, "page", /at least 1/);
    refused({ page: "2.5" }, "page", /whole number/);
    refused({ per_page: "lots" }, "per_page", /whole number/);
    refused({ status: "done" }, "status", /one of queued, running/);
    refused({ job_kinds: "script,banana" }, "job_kinds", /unknown job kind "banana"/);
    refused({ tag: "gpu,!cpu" }, "tag", /every value with !/);
    refused({ created_by: "!" }, "created_by", /followed by a value/);
    refused({ script_path_exact: ",," }, "script_path_exact", /must not be empty/);
    refused(
      { created_after: "2025-02-01T00:00:00Z", created_before: "2025-01-01T00:00:00Z" },
      "created_after",
      /earlier than created_before/,
    );
  });
});

describe("schedule_path and label", () => {
  it("are read as value filters", () => {
    assert.deepEqual(parseJobListQuery({ schedule_path: "f/ops/nightly", label: "!deploy,!prod" }), {
      schedulePath: { in: ["f/ops/nightly"] },
      label: { notIn: ["deploy", "prod"] },
    });
  });

  it("refuse a schedule path that is no path and an overlong label", () => {
    refused({ schedule_path: "nightly" }, "schedule_path", /must look like u\/<user>\/<name>/);
    refused({ schedule_path: "f/ops/x,f/ops/a b" }, "schedule_path", /may only contain/);
    refused({ label: "x".repeat(256) }, "label", /at most 255 characters/);
  });
});

describe("checkJobListParams", () => {
  it("takes the known parameters and the token", () => {
    checkJobListParams(["script_path_exact", "schedule_path", "label", "per_page", "token"]);
  });

  it("refuses Windmill filters Millrace lacks and unknown names, naming them", () => {
    assert.throws(
      () => checkJobListParams(["per_page", "worker"]),
      (error: unknown) =>
        error instanceof AppError &&
        error.field === "worker" &&
        /^worker: this Windmill filter is not supported/.test(error.message),
    );
    assert.throws(
      () => checkJobListParams(["script_path"]),
      (error: unknown) =>
        error instanceof AppError &&
        error.field === "script_path" &&
        /^script_path: unknown parameter; the job lists take script_path_exact/.test(error.message),
    );
  });
});

describe("parseDateTime", () => {
  it("takes RFC 3339 and the forms a query string turns it into", () => {
    const at = new Date("2025-01-31T10:00:00Z").getTime();
    assert.equal(parseDateTime("x", "2025-01-31T12:00:00+02:00").getTime(), at);
    // `+` unencoded in a URL arrives as a space.
    assert.equal(parseDateTime("x", "2025-01-31T12:00:00 02:00").getTime(), at);
    assert.equal(parseDateTime("x", "2025-01-31T10:00:00.000Z").getTime(), at);
    assert.equal(parseDateTime("x", "2025-01-31T10:00").getTime(), at, "no offset means UTC");
    assert.equal(parseDateTime("x", "2025-01-31").getTime(), new Date("2025-01-31T00:00:00Z").getTime());
    assert.throws(() => parseDateTime("x", "1738317600"), /x: not a valid date-time/);
    assert.throws(() => parseDateTime("x", "2025-02-30T10:00:00Z"), /x: not a valid date-time/);
    assert.throws(() => parseDateTime("x", "2025-01-31T25:00:00Z"), /x: not a valid date-time/);
    assert.equal(parseDateTime("x", "2024-02-29").getUTCDate(), 29);
  });
});
