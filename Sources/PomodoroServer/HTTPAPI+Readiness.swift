import Foundation
import PomodoroNet

// `GET /readyz`: whether this server should be sent new clients now. `/healthz` says it is alive; `/readyz`
// says it can serve: its database answers, so does what its router needs, and it is not shutting
// down. Proxies and Kubernetes take a node out of rotation while it answers 503, and put it back without
// restarting it once it answers 200 again.

extension HTTPAPI {
    static let readinessPath = "/readyz"

    /// Answers `/readyz`: `200 ready`, or 503 with the first reason it is not. The database is asked as by
    /// `/healthz` (a read that finds nothing); then the router (`RoomRouter.readinessCheck`).
    func readiness(responder: any HTTPAnswering) {
        @Sendable func answer(_ status: Int, _ text: String) { responder.respond(HTTPResponse(status: status, text: text)) }
        if hub.draining { return answer(503, "not ready: shutting down\n") }
        let check = router.readinessCheck
        let routerCheck: @Sendable () -> Void = {
            check { reason in
                guard let reason else { return answer(200, "ready\n") }
                answer(503, "not ready: \(reason)\n")
            }
        }
        guard let store else { return routerCheck() }
        store.probe { outage in
            guard let outage else { return routerCheck() }
            let seconds = Int(Date().timeIntervalSince(outage.since).rounded())
            answer(503, "not ready: database unavailable for \(seconds) s: \(outage.reason)\n")
        }
    }
}
