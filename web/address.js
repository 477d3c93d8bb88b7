// Rooms in the address bar: /r/team-alpha (or /#team-alpha), and the invite link to one.

export const ROOM_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/** The room named by the address, or '' when it names none (or an invalid one). */
export function roomFromLocation(location = window.location) {
  const path = location.pathname.match(/^\/r\/([^/]+)\/?$/);
  const raw = path ? path[1] : location.hash.replace(/^#\/?/, '');
  let name = '';
  try { name = decodeURIComponent(raw); } catch { name = raw; }
  return ROOM_PATTERN.test(name) ? name : '';
}

export function inviteURL(room, location = window.location) {
  return `${location.origin}/r/${encodeURIComponent(room)}`;
}
