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
            never counted, never host and earn nothing. The control commands (start, pause, resume, skip, \
            reset, extend, configure) act, so they join: they visit the room as a short-lived member named \
            pomo-cli (change it with --name) and leave when done, so they never take over the member of a \
            `pomo join` that is running. `stats` prints the room's focus \
            stats per person and per day without joining it.

            The host's commands (passcode, kick, control, handoff) act as the member `pomo join` keeps for \
            the room, since only the host may give them: run `pomo join ROOM` first. `token` lists, makes or \
            revokes the room's API tokens for the control API, in a visit like the control commands.

            SERVER: --server ws://HOST:PORT, else $POMO_SERVER, else \(ServerAddress.defaultURL).

            EXIT STATUS:
              0   done
              1   the server refused the request, the join or the watch (e.g. pause when idle, a room that is \
                  not open for status or watch), or keeps no stats
              3   join: another connection took this member over (close code 4001)
              64  bad usage: unknown option, bad room name, bad format
              69  the server could not be reached, or the connection was lost

            FILES: `pomo join` keeps its resume token in $XDG_STATE_HOME/pomo/ROOM@HOST_PORT.json \
            (~/.local/state/pomo/ when XDG_STATE_HOME is unset), so running it again within the server's \
            grace period (2 minutes by default) gives the same member back, with its focus count.
            """,
        subcommands: [Join.self, Status.self, Watch.self, Stats.self,
                      Control.Start.self, Control.Pause.self, Control.Resume.self, Control.Skip.self,
                      Control.Reset.self, Control.Extend.self, Configure.self, ScheduleCommand.self, WebhooksCommand.self,
                      Hosting.Passcode.self, Hosting.Kick.self, Hosting.Control.self, Hosting.HandOff.self,
                      Tokens.self])
}
