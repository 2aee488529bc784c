public import FleetAuthServerSupport

/// An error the token server answers with: a canonical status and a message in Google's JSON error body,
/// `{"error":{"code":403,"message":"...","status":"PERMISSION_DENIED"}}` — the shape Fleet Engine uses too, so a
/// client reads both the same way. The message never contains a password, session token or JWT.
///
/// It is `GoogleAPIError`, the error of both FleetAuth servers; this name says where it comes from.
public typealias TokenServerError = GoogleAPIError
