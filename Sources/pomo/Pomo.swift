import ArgumentParser
import PomodoroClient

@main
struct Pomo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pomo",
        abstract: "The terminal client of a Pomodoro server: join a shared focus room, or script one.",
        discussion: """
            `pomo join ROOM` opens a full-screen view of the room. `status` and `watch` are for scripts, status bars \
            and dashboards: they observe the room without joining it, so nobody in it sees them and they are \
            never counted, never host and earn nothing. `stats` prints the room's focus stats per person and \
            per day without joining it.

            The control commands (start, pause, resume, skip, reset, extend, configure) press the room's \
            controls as someone, and never make a room: one that is not open is refused (exit 1), so a typo \
            starts nothing. With --api-token or $POMO_API_TOKEN they press over the HTTP control API, as that \
            API token. Otherwise they press as the member `pomo join` keeps for the room (its stored resume \
            token) while it is connected: they watch the room with that token and press as that member, so \
            nobody sees anyone come or go, the room's events name that member, and the running `pomo join` \
            goes on (bind `pomo start ROOM` to a key beside it). Otherwise they visit the open room as a \
            short-lived member named pomo-cli (change it with --name) and leave when done. On a cluster any \
            node serves any room: when pomo join keeps no token for the room under the address given, the \
            tokens it keeps for the room under other addresses are tried in turn (the server recognises only \
            its own, so showing another's presses nothing).

            The host's commands (passcode, kick, control, handoff) act as the member `pomo join` keeps for \
            the room, since only the host may give them: run `pomo join ROOM` first. `token` lists, makes or \
            revokes the room's API tokens for the control API, pressing as the control commands do (the member \
            `pomo join` keeps while it is connected, else a short visit) and only in a room that is open.

            SERVER: --server ws://HOST:PORT, else $POMO_SERVER, else \(ServerAddress.defaultURL).

            EXIT STATUS:
              0   done
              1   the server refused the request, the join or the watch (e.g. pause when idle, a room that is \
                  not open for status, watch or a control command, an API token the room does not hold), or \
                  keeps no stats
              3   join: another connection took this member over (close code 4001)
              64  bad usage: unknown option, bad room name, bad format, a value out of the server's bounds
              69  the server could not be reached, or the connection was lost (over the control API also: \
                  503 or another server error)

            FILES: `pomo join` keeps its resume token in $XDG_STATE_HOME/pomo/ROOM@HOST_PORT.json \
            (~/.local/state/pomo/ when XDG_STATE_HOME is unset), so running it again within the server's \
            grace period (2 minutes by default) gives the same member back, with its focus count. The \
            control commands and token press with the same token (or with the room's token kept for another \
            address of the cluster when there is none for this one).
            """,
        subcommands: [Join.self, Status.self, Watch.self, Stats.self,
                      Control.Start.self, Control.Pause.self, Control.Resume.self, Control.Skip.self,
                      Control.Reset.self, Control.Extend.self, Configure.self, ScheduleCommand.self, WebhooksCommand.self,
                      Hosting.Passcode.self, Hosting.Kick.self, Hosting.Control.self, Hosting.HandOff.self,
                      Tokens.self])
}
