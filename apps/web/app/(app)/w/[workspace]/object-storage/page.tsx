"use client";
import { useQuery } from "@tanstack/react-query";
import { use } from "react";
import { errorMessage } from "@/lib/errors";
import { useTRPC } from "@/lib/trpc";
import { ObjectStorageForm, ObjectStorageReadOnly } from "./object-storage-form";

export default function ObjectStoragePage({ params }: { params: Promise<{ workspace: string }> }) {
  const { workspace } = use(params);
  const trpc = useTRPC();
  const view = useQuery({ ...trpc.objectStorage.get.queryOptions({ workspace }), retry: false });
  const data = view.data;

  return (
    <div>
      <h1>Object storage</h1>
      <p className="muted" style={{ marginTop: 0 }}>
        The workspace&apos;s files live in an S3 bucket (AWS S3 or any S3-compatible store: MinIO, Ceph, R2,
        …). Jobs read and write them without handling credentials: <code>writeS3File</code> and{" "}
        <code>loadS3File</code> of <code>windmill-client</code> in TypeScript,{" "}
        <code>wmill.write_s3_file</code> and <code>wmill.load_s3_file</code> in Python. Windmill&apos;s{" "}
        <code>large_file_storage</code> setting, which <code>wmill sync push --include-settings</code> also
        sets.
      </p>
      {view.isPending && <p className="muted">Loading…</p>}
      {view.error && <div className="error">{errorMessage(view.error)}</div>}
      {data &&
        (data.canEdit ? (
          <ObjectStorageForm workspace={workspace} view={data} />
        ) : (
          <ObjectStorageReadOnly view={data} />
        ))}
    </div>
  );
}
