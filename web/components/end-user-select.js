import { select } from "./fields.js";

/**
 * A select of the project's end users (name and external id), for pages that work inside
 * one end user's library. Loads the first 100; a longer list is reached by id in the URL.
 * `none` names the empty choice.
 */
export async function endUserSelect(api, value = "", none = "Choose an end user") {
  const page = await api("/end-users", { query: { limit: 100 } });
  const options = page.data.map((u) => [u.id, [u.name, u.external_id].filter(Boolean).join(" · ") || u.id]);
  if (value && !options.some(([id]) => id === value)) options.unshift([value, value]);
  return select("end_user_id", [["", none], ...options], value);
}
