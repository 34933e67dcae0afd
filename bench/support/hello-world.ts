// The baseline: a bare Elysia hello-world, served the same way parley is.
import { Elysia } from "elysia";

const app = new Elysia()
  .get("/", () => ({ hello: "world" }))
  .post("/", ({ body }) => body)
  .listen({ port: Number(process.argv[2]), hostname: "127.0.0.1" });
console.log(`listening ${app.server?.port}`);
