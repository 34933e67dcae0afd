/** A due delivery offered for an attempt: its endpoint's oldest due first. */
export type Offer = { id: string; endpoint_id: string; project_id: string; next_attempt_at: string };

/** Slots per endpoint and per project, how many to take now, and what already runs (absent: none). */
export type ShareLimits = {
  perEndpoint: number;
  perProject: number;
  limit: number;
  busyEndpoints: Record<string, number>;
  busyProjects: Record<string, number>;
};

type EndpointQueue = { offers: Offer[]; busy: number };
type ProjectQueue = { endpoints: EndpointQueue[]; busy: number };

const oldest = (q: EndpointQueue) => q.offers[0]!.next_attempt_at;
/** ISO timestamps order as strings; plain comparison, not localeCompare (collation is slow and not wanted). */
const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Picks up to `limit` offers round-robin: each turn goes to the project with the fewest
 * attempts running (the oldest due on a tie), and inside it to the next endpoint in
 * rotation, the least busy and oldest due first. So however many dead endpoints and
 * however long a backlog one project has, it takes a turn only when every other project
 * with work has as many attempts running, and never more than its cap.
 */
export function pickFairly(offers: readonly Offer[], limits: ShareLimits): Offer[] {
  const endpoints = new Map<string, EndpointQueue>();
  const projects = new Map<string, ProjectQueue>();
  for (const offer of offers) {
    let ep = endpoints.get(offer.endpoint_id);
    if (!ep) {
      ep = { offers: [], busy: limits.busyEndpoints[offer.endpoint_id] ?? 0 };
      endpoints.set(offer.endpoint_id, ep);
      let project = projects.get(offer.project_id);
      if (!project) projects.set(offer.project_id, (project = { endpoints: [], busy: limits.busyProjects[offer.project_id] ?? 0 }));
      project.endpoints.push(ep);
    }
    if (ep.busy + ep.offers.length < limits.perEndpoint) ep.offers.push(offer);
  }
  const open: ProjectQueue[] = [];
  for (const project of projects.values()) {
    project.endpoints = project.endpoints.filter((q) => q.offers.length > 0);
    for (const q of project.endpoints) q.offers.sort((a, b) => compare(a.next_attempt_at, b.next_attempt_at));
    project.endpoints.sort((a, b) => a.busy - b.busy || compare(oldest(a), oldest(b)));
    if (project.endpoints.length > 0 && project.busy < limits.perProject) open.push(project);
  }
  const picked: Offer[] = [];
  while (picked.length < limits.limit && open.length > 0) {
    let turn = 0;
    for (let i = 1; i < open.length; i++) {
      const [a, b] = [open[i]!, open[turn]!];
      if (a.busy < b.busy || (a.busy === b.busy && oldest(a.endpoints[0]!) < oldest(b.endpoints[0]!))) turn = i;
    }
    const project = open[turn]!;
    const ep = project.endpoints.shift()!;
    picked.push(ep.offers.shift()!);
    project.busy++;
    if (ep.offers.length > 0) project.endpoints.push(ep);
    if (project.endpoints.length === 0 || project.busy >= limits.perProject) open.splice(turn, 1);
  }
  return picked;
}
