/// Finds the cluster's Redis master through Redis Sentinel (`redis-sentinel://…/MASTER_NAME`).
///
/// Every new connection asks the sentinels, in the order given, `SENTINEL get-master-addr-by-name NAME`,
/// and takes the first answer whose Redis then says it is a master (`RedisConnection` checks `ROLE`). The
/// cluster's connections are made anew whenever one breaks (the master died) or is refused as a replica
/// (`READONLY`, a master demoted), so leases, the bus, the node registry and the address limits all follow a
/// failover without listening for it: the first request after the sentinels promoted a replica reaches it.
/// What the master held and had not yet copied to the replica is lost with it; the leases are put back from
/// the store's fences (`LeaseKeeper`), the bus's messages are at most once anyway (docs/CLUSTER.md).
public enum RedisSentinel {
    /// The master's host and port as the first sentinel that knows it says.
    /// - Throws: `RedisError` of kind `.connection` when no sentinel answers with a master.
    public static func master(of address: RedisAddress, timeout: Double) throws(RedisError) -> RedisAddress.Endpoint {
        guard let name = address.masterName else {
            return RedisAddress.Endpoint(host: address.host, port: address.port)
        }
        var problems: [String] = []
        var refusals = 0
        for sentinel in address.sentinels {
            do throws(RedisError) {
                let reply = try ask(sentinel, ["SENTINEL", "get-master-addr-by-name", name], of: address, timeout: timeout)
                guard case .array(let parts) = reply, parts.count == 2, let host = parts[0].text,
                      let port = parts[1].text.flatMap({ Int($0) }) else {
                    problems.append("\(sentinel): no master named \(name)")
                    continue
                }
                return RedisAddress.Endpoint(host: host, port: port)
            } catch {
                if error.isAuthenticationRefused { refusals += 1 }
                problems.append("\(sentinel): \(error.message)")
            }
        }
        if refusals > 0, refusals == address.sentinels.count {
            throw RedisError(.reply, "\(RedisError.refusedCredentials) of the sentinels of \(address.redacted): \(problems.joined(separator: "; "))")
        }
        throw RedisError(.connection, "no sentinel names a master for \(name): \(problems.joined(separator: "; "))")
    }

    /// One command to `sentinel`: without credentials first, then, if it asks for them (`NOAUTH`) and the
    /// address has a password, on a connection that authenticates with the address's user and password.
    static func ask(_ sentinel: RedisAddress.Endpoint, _ command: [String], of address: RedisAddress,
                    timeout: Double) throws(RedisError) -> RedisValue {
        do throws(RedisError) {
            return try RedisConnection(RedisAddress(host: sentinel.host, port: sentinel.port), timeout: timeout)
                .command(command)
        } catch where error.kind == .reply && error.message.hasPrefix("NOAUTH") && address.password != nil {
            let authenticated = RedisAddress(host: sentinel.host, port: sentinel.port, user: address.user,
                                             password: address.password)
            return try RedisConnection(authenticated, timeout: timeout).command(command)
        }
    }
}
