// The path rules of a script or flow, checked in the browser before any request. Kept apart from
// the editor: pages that only need these rules must not pull in the editor (and with it Monaco).
const SEGMENT = /^[A-Za-z0-9_-]+$/;
const MAX_PATH_LENGTH = 255;

export type Role = "admin" | "developer" | "operator";

/**
 * What is wrong with a path the caller is about to deploy to, as a sentence for the field, or null.
 * The same rules as the server (packages/core paths.ts and access.ts), checked before any request.
 */
export function pathProblem(path: string, me: { username: string; role: Role }): string | null {
  if (path === "")
    return `Give the script a path, such as u/${me.username}/my_script or f/<folder>/my_script.`;
  if (path.length > MAX_PATH_LENGTH)
    return `Keep the path to ${MAX_PATH_LENGTH} characters or fewer (it has ${path.length}).`;
  const segments = path.split("/");
  const [kind, owner, ...rest] = segments;
  if (kind !== "u" && kind !== "f")
    return `Start the path with u/${me.username}/ (your own scripts) or f/<folder>/ (a folder's).`;
  if (!owner) {
    return kind === "u"
      ? `Name the user after u/, then the script: u/${me.username}/my_script.`
      : "Name the folder after f/, then the script: f/<folder>/my_script.";
  }
  if (rest.length === 0 || segments[segments.length - 1] === "")
    return `Give the script a name after ${rest.length === 0 ? `${path}/` : path}.`;
  if (segments.some((segment) => segment === ""))
    return "Remove the empty part between two slashes (//) from the path.";
  const bad = segments.find((segment) => !SEGMENT.test(segment));
  if (bad !== undefined)
    return `Use only letters, digits, _ and - between the slashes ("${bad}" has other characters).`;
  if (kind === "u" && owner !== me.username && me.role !== "admin")
    return `Scripts under u/${owner}/ belong to ${owner}: save yours under u/${me.username}/ or in a folder you can write to.`;
  return null;
}
