import { checkbox, field } from "../../components/fields.js";
import { h } from "../../ui.js";

/**
 * The "selected recordings" of an Ask scope: a checkbox per transcribed recording of the
 * chosen end user (their 50 newest). show(endUserId) reloads the list for that end user;
 * ids() are the checked ones. Its own error slot comes first, so an API error about
 * scope.recording_ids lands there and not beside one checkbox.
 */
export function recordingPicker(ctx) {
  const list = h("div", { class: "picker" });
  const el = h(
    "fieldset",
    { class: "field", "data-param": "scope.recording_ids" },
    h("legend", {}, "Recordings to ask about"),
    h("span", { class: "field-error" }),
    list,
  );
  let shownFor = null;

  async function show(endUserId) {
    if (endUserId === shownFor) return;
    shownFor = endUserId;
    if (!endUserId) return list.replaceChildren(h("p", { class: "muted" }, "Choose an end user first."));
    const page = await ctx.api("/recordings", { query: { end_user_id: endUserId, status: "completed", limit: 50 } });
    list.replaceChildren(
      ...(page.data.length
        ? page.data.map((r) => {
            const box = checkbox("recording", false);
            box.value = r.id;
            return field(r.name ?? r.id, box);
          })
        : [h("p", { class: "muted" }, "This end user has no transcribed recordings yet.")]),
    );
  }

  const ids = () => [...list.querySelectorAll("input[name=recording]:checked")].map((b) => b.value);
  return { el, show, ids };
}
