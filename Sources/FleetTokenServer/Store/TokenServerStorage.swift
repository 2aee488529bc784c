public import ServiceLifecycle

/// Everything the token server keeps, by concern: users and grants, sessions, signing keys and the audit log,
/// with a lifecycle (a `Service` that holds the database until graceful shutdown). ``SQLiteTokenServerStore``
/// is the built-in driver; each part of the server takes only the protocol it needs.
public typealias TokenServerStorage = UserStore & SessionStore & SigningKeyStore & AuditLog & Service
