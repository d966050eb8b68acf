"use client";
import Link from "@/components/ui/link";
import { use } from "react";
import { ScheduleForm } from "../schedule-form";

export default function NewSchedulePage({ params }: { params: Promise<{ workspace: string }> }) {
  const { workspace } = use(params);
  return (
    <div>
      <div className="toolbar">
        <h1>New schedule</h1>
        <Link href={`/w/${workspace}/schedules`}>Back to schedules</Link>
      </div>
      <ScheduleForm workspace={workspace} />
    </div>
  );
}
