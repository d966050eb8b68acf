import { startEmbeddedPostgres } from "@millrace/db/embedded";
const db = await startEmbeddedPostgres("/work/main/.data/bench-scale-pg", { port: 5498 });
console.log(db.url);
setInterval(() => {}, 1000);
