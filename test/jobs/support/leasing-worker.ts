// A worker process that leases one job and hangs in its handler, so the test can kill -9 it mid-job.
import { systemClock } from "../../../src/clock";
import { openDatabase } from "../../../src/db/open";
import { JobQueue } from "../../../src/jobs/queue";
import { createLogger } from "../../../src/log";

type AnyJobs = Record<string, any>;

const db = openDatabase(process.argv[2]!);
const queue = new JobQueue<AnyJobs>(db, systemClock, createLogger("silent"), 1);
queue.register("slow", async () => {
  console.log("leased");
  await new Promise(() => {}); // never finishes: the process is killed here
});
queue.start();
