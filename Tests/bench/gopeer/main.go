// A second reference peer for pomo-bench, in Go on Debian's golang-go and gorilla/websocket
// (golang-github-gorilla-websocket-dev): the part of the Pomodoro protocol (docs/PROTOCOL.md) that the
// `smoke`, `rooms` and `allhands` scenarios use, written the way a Go developer would write it: a reading
// and a writing goroutine per connection, a bounded channel of frames between a room and each writer, one
// timer per room. It does what ../peer/server.js does (its README says what that leaves out); no store.
//
//	go run . [--host 127.0.0.1] [--port 0]     (built offline by Tests/bench/run.sh, GO111MODULE=off)
//
// Prints "pomodoro-peer listening on http://HOST:PORT/" once it listens; WebSocket at /ws.
package main

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/gorilla/websocket"
)

// Limits, as the Swift server's defaults (docs/PROTOCOL.md §9).
const (
	maxMessageBytes     = 16384
	maxQueuedFrames     = 256 // a reader with more than this unsent is dropped (1008)
	memberListLimit     = 100
	memberStateInterval = 1000 // ms
	maxMembersPerRoom   = 10000
	graceMs             = 120 * 1000
	pingAfterMs         = 30 * 1000
	hangUpAfterMs       = 75 * 1000
	sweepEvery          = 5 * time.Second
	writeWait           = 10 * time.Second
)

var roomName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

func nowMs() int64 { return time.Now().UnixMilli() }

type settings struct {
	Focus          int  `json:"focus"`
	ShortBreak     int  `json:"shortBreak"`
	LongBreak      int  `json:"longBreak"`
	LongBreakEvery int  `json:"longBreakEvery"`
	AutoStart      bool `json:"autoStart"`
}

var defaultSettings = settings{Focus: 1500, ShortBreak: 300, LongBreak: 900, LongBreakEvery: 4}

type stats struct {
	FocusCompleted int   `json:"focusCompleted"`
	FocusSeconds   int64 `json:"focusSeconds"`
	Interruptions  int   `json:"interruptions"`
}

type member struct {
	id, name, token string
	client          *client
	expiry          *time.Timer
	focusMs         int64
	focusFrom       int64
	focusCompleted  int
	interruptions   int
}

// A room; every field is guarded by mu. Time is a deadline: remaining = deadline - now.
type room struct {
	mu              sync.Mutex
	id              string
	members         map[string]*member
	order           []*member // join order
	clients         map[*client]struct{}
	nextMember      int
	host            *string
	phase, status   string
	deadline        int64 // while running
	remaining       int64 // while ready or paused
	phaseLength     int64
	cycle           int
	settings        settings
	pending         *settings
	focusCompleted  int
	focusMs         int64
	interruptions   int
	focusSince      *int64
	seq             int64
	shownSeconds    int64
	timer           *time.Timer
	memberState     *time.Timer
	lastMemberState int64
	gone            bool
}

type client struct {
	conn      *websocket.Conn
	send      chan []byte
	closeOnce sync.Once
	done      chan struct{}
	// The room and member it is, guarded by mu (changed under the room's lock too).
	mu     sync.Mutex
	room   *room
	member *member
	// The keep-alive's, guarded by kaMu.
	kaMu      sync.Mutex
	lastHeard int64
	pingSent  bool
}

var (
	roomsMu sync.Mutex
	rooms   = map[string]*room{}
	clients sync.Map // *client -> struct{}
)

type protocolError struct{ code, message, field string }

func (e *protocolError) Error() string { return e.message }

func perr(code, message, field string) *protocolError { return &protocolError{code, message, field} }

// Queues a frame for the client's writer; a reader that cannot keep up is closed with 1008.
func (c *client) sendFrame(frame []byte) {
	select {
	case <-c.done:
	case c.send <- frame:
	default:
		c.closeWith(1008, "too slow")
	}
}

func (c *client) place() (*room, *member) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.room, c.member
}

func (c *client) setPlace(r *room, m *member) {
	c.mu.Lock()
	c.room, c.member = r, m
	c.mu.Unlock()
}

func (c *client) sendJSON(message any) {
	frame, _ := json.Marshal(message)
	c.sendFrame(frame)
}

func (c *client) closeWith(code int, reason string) {
	c.closeOnce.Do(func() {
		close(c.done)
		_ = c.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason), time.Now().Add(time.Second))
		_ = c.conn.Close()
	})
}

func (c *client) writer() {
	defer c.conn.Close()
	for {
		select {
		case frame := <-c.send:
			_ = c.conn.SetWriteDeadline(time.Now().Add(writeWait))
			if err := c.conn.WriteMessage(websocket.TextMessage, frame); err != nil {
				c.closeWith(1006, "")
				return
			}
		case <-c.done:
			return
		}
	}
}

func (r *room) broadcast(message any) {
	frame, _ := json.Marshal(message) // encoded once, the same bytes to every member
	for c := range r.clients {
		c.sendFrame(frame)
	}
}

func (r *room) remainingMs(now int64) int64 {
	switch r.status {
	case "running":
		if r.deadline > now {
			return r.deadline - now
		}
		return 0
	case "idle":
		return 0
	}
	return r.remaining
}

func max64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

func (r *room) roomFocusMs(now int64) int64 {
	if r.focusSince == nil {
		return r.focusMs
	}
	return r.focusMs + max64(0, now-*r.focusSince)
}

func (r *room) memberFocusMs(m *member, now int64) int64 {
	if r.focusSince == nil || m.client == nil {
		return m.focusMs
	}
	return m.focusMs + max64(0, now-max64(*r.focusSince, m.focusFrom))
}

func (r *room) creditFocus(until int64) {
	if r.focusSince == nil {
		return
	}
	for _, m := range r.order {
		if m.client != nil {
			m.focusMs += max64(0, until-max64(*r.focusSince, m.focusFrom))
		}
	}
	r.focusMs += max64(0, until-*r.focusSince)
	r.focusSince = nil
}

func (r *room) snapshot(now int64) map[string]any {
	list := []map[string]any{}
	for _, m := range r.order {
		if len(list) == memberListLimit {
			break
		}
		present := m.client != nil
		list = append(list, map[string]any{
			"id": m.id, "name": m.name, "present": present, "connected": present, "task": "",
			"stats": stats{m.focusCompleted, r.memberFocusMs(m, now) / 1000, m.interruptions},
		})
	}
	var endsAt any
	if r.status == "running" {
		endsAt = r.deadline
	}
	return map[string]any{
		"id": r.id, "phase": r.phase, "status": r.status, "running": r.status == "running",
		"remainingMs": r.remainingMs(now), "phaseLengthMs": r.phaseLength, "endsAt": endsAt, "cycle": r.cycle,
		"settings": r.settings, "pendingSettings": r.pending, "members": list,
		"memberCount": len(r.members), "presentCount": len(r.clients), "membersTruncated": len(r.members) > memberListLimit,
		"stats": stats{r.focusCompleted, r.roomFocusMs(now) / 1000, r.interruptions},
		"seq":   r.seq, "serverTime": now, "control": "anyone", "host": r.host, "locked": false,
	}
}

func (r *room) broadcastState(now int64) {
	if r.memberState != nil {
		r.memberState.Stop()
		r.memberState = nil
	}
	r.broadcast(map[string]any{"type": "state", "room": r.snapshot(now)})
}

// A state after members came or went: at once in a small room (with its event), at most once a second in a
// big one (no event).
func (r *room) membersChanged(now int64, event map[string]any) {
	if len(r.members) <= memberListLimit {
		if event != nil {
			event["type"], event["room"], event["serverTime"] = "event", r.id, now
			r.broadcast(event)
		}
		r.broadcastState(now)
		return
	}
	if r.memberState != nil {
		return
	}
	wait := max64(0, r.lastMemberState+memberStateInterval-now)
	r.memberState = time.AfterFunc(time.Duration(wait)*time.Millisecond, func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.memberState = nil
		if r.gone {
			return
		}
		r.lastMemberState = nowMs()
		r.broadcast(map[string]any{"type": "state", "room": r.snapshot(r.lastMemberState)})
	})
}

func (r *room) lengthOf(phase string) int64 {
	switch phase {
	case "focus":
		return int64(r.settings.Focus) * 1000
	case "shortBreak":
		return int64(r.settings.ShortBreak) * 1000
	}
	return int64(r.settings.LongBreak) * 1000
}

func (r *room) run(remaining, now int64) {
	r.status = "running"
	r.deadline = now + remaining
	r.remaining = 0
	r.shownSeconds = (remaining + 999) / 1000
	if r.phase == "focus" {
		since := now
		r.focusSince = &since
	}
	r.schedule()
}

func (r *room) stopRunning(now int64) {
	r.creditFocus(now)
	if r.timer != nil {
		r.timer.Stop()
		r.timer = nil
	}
}

func (r *room) enter(phase string, at int64, running bool) {
	r.phase = phase
	r.phaseLength = r.lengthOf(phase)
	if running {
		r.run(r.phaseLength, at)
	} else {
		r.status = "ready"
		r.remaining = r.phaseLength
		r.deadline = 0
	}
}

func (r *room) nextPhase() string {
	if r.phase == "focus" {
		if r.cycle >= r.settings.LongBreakEvery {
			return "longBreak"
		}
		return "shortBreak"
	}
	return "focus"
}

func (r *room) moveOn(at int64) map[string]any {
	completed := r.phase
	next := r.nextPhase()
	if completed == "shortBreak" {
		r.cycle++
	}
	if completed == "longBreak" {
		r.cycle = 1
	}
	if r.pending != nil {
		r.settings = *r.pending
		r.pending = nil
	}
	autoStarted := r.settings.AutoStart && len(r.clients) > 0
	r.enter(next, at, autoStarted)
	return map[string]any{"completed": completed, "next": next, "autoStarted": autoStarted, "cycle": r.cycle}
}

// The room's timer, set for its next whole-second boundary.
func (r *room) schedule() {
	if r.timer != nil {
		r.timer.Stop()
		r.timer = nil
	}
	if r.status != "running" {
		return
	}
	next := r.deadline - max64(0, r.shownSeconds-1)*1000
	wait := max64(0, next-nowMs())
	r.timer = time.AfterFunc(time.Duration(wait)*time.Millisecond, r.advance)
}

// Phases that ended by now, each on its own deadline, then a tick if the shown second fell.
func (r *room) advance() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.gone {
		return
	}
	r.timer = nil
	now := nowMs()
	for r.status == "running" && r.deadline <= now {
		deadline := r.deadline
		if r.phase == "focus" {
			r.creditFocus(deadline)
			r.focusCompleted++
			for _, m := range r.order {
				if m.client != nil {
					m.focusCompleted++
				}
			}
		}
		fields := r.moveOn(deadline)
		r.seq++
		fields["type"], fields["room"], fields["kind"], fields["serverTime"] = "event", r.id, "phaseCompleted", now
		r.broadcast(fields)
		r.broadcastState(now)
	}
	if r.status != "running" {
		return
	}
	seconds := (r.deadline - now + 999) / 1000
	if seconds < r.shownSeconds {
		r.shownSeconds = seconds
		r.broadcast(map[string]any{
			"type": "tick", "room": r.id, "phase": r.phase, "remainingMs": seconds * 1000, "endsAt": r.deadline,
			"cycle": r.cycle, "seq": r.seq, "serverTime": now,
		})
	}
	r.schedule()
}

// ---------------------------------------------------------------------------------------------------------
// Commands.

func readRef(message map[string]any) (any, *protocolError) {
	ref, ok := message["ref"]
	if !ok || ref == nil {
		return nil, nil
	}
	switch v := ref.(type) {
	case float64:
		if v == float64(int64(v)) && v <= 9007199254740991 && v >= -9007199254740991 {
			return int64(v), nil
		}
	case string:
		if len(v) <= 64 {
			return v, nil
		}
	}
	return nil, perr("bad_request", "'ref' must be a string of at most 64 bytes or an integer", "ref")
}

func requireString(message map[string]any, field string) (string, *protocolError) {
	if s, ok := message[field].(string); ok {
		return s, nil
	}
	return "", perr("bad_request", fmt.Sprintf("'%s' must be a string", field), field)
}

func requireInteger(message map[string]any, field string, min, max int) (int, *protocolError) {
	v, ok := message[field].(float64)
	if !ok || v != float64(int64(v)) {
		return 0, perr("bad_request", fmt.Sprintf("'%s' must be an integer", field), field)
	}
	if int(v) < min || int(v) > max {
		return 0, perr("bad_request", fmt.Sprintf("'%s' must be %d–%d", field, min, max), field)
	}
	return int(v), nil
}

func randomToken() string {
	raw := make([]byte, 18)
	_, _ = rand.Read(raw)
	return base64.RawURLEncoding.EncodeToString(raw)
}

func join(c *client, message map[string]any, ref any, now int64) *protocolError {
	if r, _ := c.place(); r != nil {
		return perr("already_joined", "this connection is in a room already", "")
	}
	name, e := requireString(message, "room")
	if e != nil {
		return e
	}
	if !roomName.MatchString(name) {
		return perr("bad_request", "'room' must be 1–64 of A–Z a–z 0–9 _ -", "room")
	}
	who, e := requireString(message, "name")
	if e != nil {
		return e
	}
	who = strings.TrimSpace(who)
	if n := utf8.RuneCountInString(who); n < 1 || n > 40 || strings.IndexFunc(who, func(r rune) bool { return r < 0x20 || (r >= 0x7f && r <= 0x9f) }) >= 0 {
		return perr("bad_request", "'name' must be 1–40 visible characters", "name")
	}
	var token *string
	if t, ok := message["token"]; ok && t != nil {
		s, e := requireString(message, "token")
		if e != nil {
			return e
		}
		token = &s
	}
	roomsMu.Lock()
	r := rooms[name]
	if r == nil {
		r = &room{id: name, members: map[string]*member{}, clients: map[*client]struct{}{}, nextMember: 1,
			phase: "idle", status: "idle", cycle: 1, settings: defaultSettings}
		rooms[name] = r
	}
	r.mu.Lock() // taken before roomsMu is let go, so that the room cannot be dropped in between
	roomsMu.Unlock()
	defer r.mu.Unlock()
	var m *member
	if token != nil {
		for _, candidate := range r.order {
			if candidate.token == *token {
				m = candidate
			}
		}
	}
	resumed := m != nil
	if resumed {
		if m.client != nil {
			older := m.client
			r.detach(m, now)
			older.sendJSON(map[string]any{"type": "error", "code": "replaced", "message": "another connection joined as this member"})
			older.closeWith(4001, "replaced")
		}
		if m.expiry != nil {
			m.expiry.Stop()
		}
		m.name = who
	} else {
		if len(r.members) >= maxMembersPerRoom {
			return perr("room_full", "the room is full", "")
		}
		m = &member{id: fmt.Sprintf("m%d", r.nextMember), name: who, token: randomToken()}
		r.nextMember++
		r.members[m.id] = m
		r.order = append(r.order, m)
		if r.host == nil {
			id := m.id
			r.host = &id
		}
	}
	m.client = c
	m.focusFrom = now
	c.setPlace(r, m)
	r.clients[c] = struct{}{}
	r.seq++
	reply := map[string]any{"type": "welcome", "you": map[string]any{"id": m.id, "token": m.token, "resumed": resumed},
		"room": r.snapshot(now), "serverTime": now}
	if ref != nil {
		reply["ref"] = ref
	}
	c.sendJSON(reply)
	if resumed {
		r.membersChanged(now, map[string]any{"kind": "memberReturned", "member": m.id})
	} else {
		r.membersChanged(now, map[string]any{"kind": "memberJoined", "member": m.id, "name": who})
	}
	return nil
}

// Takes a member's connection out of the room: they stay a member (away) for the grace period.
func (r *room) detach(m *member, now int64) {
	if r.focusSince != nil {
		m.focusMs += max64(0, now-max64(*r.focusSince, m.focusFrom))
		m.interruptions++
	}
	delete(r.clients, m.client)
	m.client.setPlace(nil, nil)
	m.client = nil
}

func disconnected(c *client, now int64) {
	r := lockedRoom(c)
	if r == nil {
		return
	}
	defer r.mu.Unlock()
	_, m := c.place()
	r.detach(m, now)
	m.expiry = time.AfterFunc(graceMs*time.Millisecond, func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		if m.client == nil && r.members[m.id] == m {
			r.removeMember(m, "expired", nowMs())
		}
	})
	r.seq++
	r.membersChanged(now, map[string]any{"kind": "memberAway", "member": m.id, "reason": "disconnected"})
}

func (r *room) removeMember(m *member, reason string, now int64) {
	if m.expiry != nil {
		m.expiry.Stop()
	}
	if m.client != nil {
		r.detach(m, now)
	}
	delete(r.members, m.id)
	for i, candidate := range r.order {
		if candidate == m {
			r.order = append(r.order[:i], r.order[i+1:]...)
			break
		}
	}
	if r.host != nil && *r.host == m.id {
		r.host = nil
		for _, candidate := range r.order {
			id := candidate.id
			if candidate.client != nil {
				r.host = &id
				break
			}
			if r.host == nil {
				r.host = &id
			}
		}
	}
	r.seq++
	r.membersChanged(now, map[string]any{"kind": "memberLeft", "member": m.id, "reason": reason})
	if len(r.members) == 0 {
		r.stopRunning(now)
		if r.memberState != nil {
			r.memberState.Stop()
		}
		r.gone = true
		roomsMu.Lock()
		if rooms[r.id] == r {
			delete(rooms, r.id)
		}
		roomsMu.Unlock()
	}
}

func (r *room) configure(message map[string]any) (string, *protocolError) {
	var s settings
	var e *protocolError
	if s.Focus, e = requireInteger(message, "focus", 1, 14400); e != nil {
		return "", e
	}
	if s.ShortBreak, e = requireInteger(message, "shortBreak", 1, 14400); e != nil {
		return "", e
	}
	if s.LongBreak, e = requireInteger(message, "longBreak", 1, 14400); e != nil {
		return "", e
	}
	if s.LongBreakEvery, e = requireInteger(message, "longBreakEvery", 1, 12); e != nil {
		return "", e
	}
	autoStart, ok := message["autoStart"].(bool)
	if !ok {
		return "", perr("bad_request", "'autoStart' must be a boolean", "autoStart")
	}
	s.AutoStart = autoStart
	if r.status == "idle" || r.status == "ready" {
		r.settings = s
		r.pending = nil
		if r.status == "ready" {
			r.phaseLength = r.lengthOf(r.phase)
			r.remaining = r.phaseLength
		}
		return "now", nil
	}
	if s == r.settings {
		r.pending = nil
	} else {
		r.pending = &s
	}
	return "nextPhase", nil
}

// A timer command, under the room's lock; returns the `ok` reply's extra fields.
func (r *room) control(c *client, kind string, message map[string]any, now int64) (map[string]any, *protocolError) {
	extra := map[string]any{}
	switch kind {
	case "start":
		if r.status == "running" {
			return nil, perr("invalid_state", "the timer is already running", "")
		}
		if r.status == "idle" {
			r.enter("focus", now, true)
		} else {
			r.run(r.remaining, now)
		}
	case "pause":
		if r.status != "running" {
			return nil, perr("invalid_state", "the timer is not running", "")
		}
		if r.phase == "focus" {
			r.interruptions++
		}
		r.remaining = max64(0, r.deadline-now)
		r.stopRunning(now)
		r.status = "paused"
		r.deadline = 0
	case "resume":
		if r.status != "paused" {
			return nil, perr("invalid_state", "the timer is not paused", "")
		}
		r.run(r.remaining, now)
	case "skip":
		if r.phase == "idle" {
			return nil, perr("invalid_state", "there is no phase to skip", "")
		}
		if r.status == "running" && r.phase == "focus" {
			r.interruptions++
		}
		r.stopRunning(now)
		r.moveOn(now)
	case "reset":
		if r.phase == "idle" && r.cycle == 1 {
			return nil, perr("invalid_state", "the timer is already reset", "")
		}
		if r.status == "running" && r.phase == "focus" {
			r.interruptions++
		}
		r.stopRunning(now)
		r.phase, r.status, r.deadline, r.remaining, r.phaseLength, r.cycle = "idle", "idle", 0, 0, 0, 1
		if r.pending != nil {
			r.settings = *r.pending
			r.pending = nil
		}
	case "configure":
		applies, e := r.configure(message)
		if e != nil {
			return nil, e
		}
		extra["appliesFrom"] = applies
	}
	r.seq++
	r.broadcast(map[string]any{"type": "event", "room": r.id, "kind": "control", "serverTime": now, "action": kind, "by": memberOf(c).id})
	r.broadcastState(now)
	return extra, nil
}

func memberOf(c *client) *member {
	_, m := c.place()
	return m
}

var timerCommands = map[string]bool{"start": true, "pause": true, "resume": true, "skip": true, "reset": true, "configure": true}
var notHere = map[string]bool{"extend": true, "task": true, "presence": true, "control": true, "handOff": true, "stats": true}

// The room a connection is in, locked; nil if none.
func lockedRoom(c *client) *room {
	for {
		r, _ := c.place()
		if r == nil {
			return nil
		}
		r.mu.Lock()
		if now, _ := c.place(); now == r {
			return r
		}
		r.mu.Unlock()
	}
}

func handle(c *client, data []byte, binary bool) {
	now := nowMs()
	if binary {
		c.sendJSON(map[string]any{"type": "error", "code": "binary_unsupported", "message": "this protocol uses JSON text frames only"})
		return
	}
	var value any
	if err := json.Unmarshal(data, &value); err != nil {
		c.sendJSON(map[string]any{"type": "error", "code": "bad_json", "message": "the frame is not JSON"})
		return
	}
	message, ok := value.(map[string]any)
	if !ok {
		c.sendJSON(map[string]any{"type": "error", "code": "bad_json", "message": "a message must be a JSON object"})
		return
	}
	ref, e := readRef(message)
	if e == nil {
		e = dispatch(c, message, ref, now)
	}
	if e != nil {
		reply := map[string]any{"type": "error", "code": e.code, "message": e.message}
		if e.field != "" {
			reply["field"] = e.field
		}
		if ref != nil {
			reply["ref"] = ref
		}
		c.sendJSON(reply)
	}
}

func dispatch(c *client, message map[string]any, ref any, now int64) *protocolError {
	kind, ok := message["type"].(string)
	if !ok {
		return perr("bad_request", "'type' must be a string", "type")
	}
	switch {
	case kind == "join":
		return join(c, message, ref, now)
	case kind == "ping":
		reply := map[string]any{"type": "pong", "serverTime": now}
		if ref != nil {
			reply["ref"] = ref
		}
		c.sendJSON(reply)
		return nil
	case kind == "leave" || timerCommands[kind]:
		r := lockedRoom(c)
		if r == nil {
			return perr("not_joined", "join a room first", "")
		}
		defer r.mu.Unlock()
		reply := map[string]any{"type": "ok", "command": kind}
		if kind == "leave" {
			r.removeMember(memberOf(c), "left", now)
		} else {
			extra, e := r.control(c, kind, message, now)
			if e != nil {
				return e
			}
			for k, v := range extra {
				reply[k] = v
			}
		}
		if ref != nil {
			reply["ref"] = ref
		}
		c.sendJSON(reply)
		return nil
	case notHere[kind]:
		return perr("unknown_type", fmt.Sprintf("'%s' is not implemented by the reference peer", kind), "type")
	}
	return perr("unknown_type", "unknown message type", "type")
}

// ---------------------------------------------------------------------------------------------------------
// Transport.

var upgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}

func serveWS(w http.ResponseWriter, req *http.Request) {
	conn, err := upgrader.Upgrade(w, req, nil)
	if err != nil {
		return
	}
	conn.SetReadLimit(maxMessageBytes)
	c := &client{conn: conn, send: make(chan []byte, maxQueuedFrames), done: make(chan struct{}), lastHeard: nowMs()}
	conn.SetPongHandler(func(string) error {
		c.kaMu.Lock()
		c.lastHeard, c.pingSent = nowMs(), false
		c.kaMu.Unlock()
		return nil
	})
	clients.Store(c, struct{}{})
	go c.writer()
	defer func() {
		clients.Delete(c)
		c.closeWith(1000, "")
		disconnected(c, nowMs())
	}()
	for {
		kind, data, err := conn.ReadMessage()
		if err != nil {
			return
		}
		c.kaMu.Lock()
		c.lastHeard, c.pingSent = nowMs(), false
		c.kaMu.Unlock()
		handle(c, data, kind == websocket.BinaryMessage)
	}
}

// Keep-alive: one sweep every few seconds pings the silent and drops the long silent.
func sweep() {
	for range time.Tick(sweepEvery) {
		now := nowMs()
		clients.Range(func(key, _ any) bool {
			c := key.(*client)
			c.kaMu.Lock()
			silent, pinged := now-c.lastHeard, c.pingSent
			if silent > pingAfterMs && !pinged {
				c.pingSent = true
			}
			c.kaMu.Unlock()
			if silent > hangUpAfterMs {
				_ = c.conn.Close()
			} else if silent > pingAfterMs && !pinged {
				_ = c.conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(time.Second))
			}
			return true
		})
	}
}

func main() {
	host := flag.String("host", "127.0.0.1", "address to listen on")
	port := flag.Int("port", 0, "port (0: a free one)")
	flag.Parse()
	mux := http.NewServeMux()
	mux.HandleFunc("/ws", serveWS)
	mux.HandleFunc("/", func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("content-type", "text/plain")
		if req.URL.Path == "/healthz" {
			_, _ = w.Write([]byte("ok\n"))
			return
		}
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte("not found\n"))
	})
	listener, err := net.Listen("tcp", net.JoinHostPort(*host, fmt.Sprint(*port)))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	address := listener.Addr().(*net.TCPAddr)
	shown := address.IP.String()
	if address.IP.To4() == nil {
		shown = "[" + shown + "]"
	}
	fmt.Printf("pomodoro-peer listening on http://%s:%d/\n", shown, address.Port)
	go sweep()
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-signals
		os.Exit(0)
	}()
	_ = http.Serve(listener, mux)
}
