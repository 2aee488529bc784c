public import FleetAuthDatabase
public import ServiceLifecycle

/// Everything the token server keeps, by concern: users and grants, sessions, signing keys, the audit log and the
/// login throttle, the identities linked to users, their pruning (``RetentionStore``), with a lifecycle (a `Service` that holds the database until graceful shutdown).
/// ``SQLiteTokenServerStore`` (one machine, the default) and ``PostgresTokenServerStore`` (several instances on
/// one database) are the drivers; each part of the server takes only the protocol it needs.
public typealias TokenServerStorage = UserStore & SessionStore & SigningKeyStore & AuditLog & LoginThrottleStore
    & IdentityLinkStore & RetentionStore & Service & ClosableStore
