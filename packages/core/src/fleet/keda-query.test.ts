import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { renderKedaQuery } from "./keda-query.ts";

describe("renderKedaQuery", () => {
  it("renders one literal query per tag list, sorted and without duplicates", () => {
    assert.equal(
      renderKedaQuery({ tags: ["gpu-b", "gpu-a", "gpu-b"] }),
      "SELECT count(*) AS waiting FROM job WHERE status = 'queued' AND tag IN ('gpu-a', 'gpu-b') AND scheduled_for <= now()",
    );
    assert.equal(
      renderKedaQuery({ tags: ["etl"], cap: 50 }),
      "SELECT count(*) AS waiting FROM (SELECT 1 FROM job WHERE status = 'queued' AND tag IN ('etl') AND scheduled_for <= now() LIMIT 50) AS w",
    );
  });

  it("refuses what is not a tag, so nothing can break out of the literal", () => {
    assert.throws(() => renderKedaQuery({ tags: ["a') OR true --"] }), /not a tag/);
    assert.throws(() => renderKedaQuery({ tags: [] }), /at least one tag/);
    assert.throws(() => renderKedaQuery({ tags: ["a"], cap: 0 }));
  });
});
