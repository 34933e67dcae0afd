import { h } from "../ui.js";

/** What each kind of id is called and where it links: the API has no lookup by many ids, so each distinct id is one GET. */
const KINDS = {
  end_user_id: { path: "/end-users/", page: "#/end-users/", name: (u) => u.name ?? u.external_id },
  device_id: { path: "/devices/", page: "#/devices/", name: (d) => d.name ?? d.serial_number },
  recording_id: { path: "/recordings/", page: "#/recordings/", name: (r) => r.name },
};

/**
 * People and devices by name instead of eu_…/dev_… ids. load(rows) fetches each distinct
 * id the rows name once (all at once, however many rows share it) before the rows are
 * drawn; link(kind, id) is then a link showing the name, with the id as its tooltip. An
 * id that cannot be read (erased, or not this project's) stays an id.
 */
export function nameBook(api) {
  const names = new Map();
  async function lookup(kind, id) {
    try {
      names.set(id, KINDS[kind].name(await api(`${KINDS[kind].path}${encodeURIComponent(id)}`)) ?? id);
    } catch {
      names.set(id, id);
    }
  }
  return {
    async load(rows) {
      const wanted = new Map();
      for (const row of rows) for (const kind of Object.keys(KINDS)) if (row?.[kind] && !names.has(row[kind])) wanted.set(row[kind], kind);
      await Promise.all([...wanted].map(([id, kind]) => lookup(kind, id)));
    },
    /** The name load() read, or the id. */
    name(id) {
      return names.get(id) ?? id;
    },
    link(kind, id) {
      if (!id) return "—";
      return h("a", { href: `${KINDS[kind].page}${encodeURIComponent(id)}`, title: id }, names.get(id) ?? id);
    },
  };
}
