//! Signed-in browser sessions: a random id in an `HttpOnly`, `SameSite=Strict` cookie, bound
//! to one tenant and user, with a CSRF token every form carries. Sessions live in the
//! server's memory and end on sign-out, after [`IDLE`] without a request, or after
//! [`LIFETIME`].

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use mnemo::core::UserRef;

/// The session cookie's name.
pub(crate) const COOKIE: &str = "mnemo_panel";

/// A session ends after this long without a request.
pub(crate) const IDLE: Duration = Duration::from_secs(30 * 60);

/// A session ends this long after sign-in, whatever its use.
pub(crate) const LIFETIME: Duration = Duration::from_secs(8 * 60 * 60);

/// One signed-in browser.
#[derive(Debug, Clone)]
pub(crate) struct Session {
    /// The user it acts for.
    pub(crate) who: UserRef,
    /// The token every form of this session carries.
    pub(crate) csrf: String,
    started: Instant,
    seen: Instant,
}

/// The server's sessions, by id.
#[derive(Debug, Default)]
pub(crate) struct Sessions {
    by_id: Mutex<HashMap<String, Session>>,
}

fn random() -> String {
    format!("{}{}", uuid::Uuid::new_v4().simple(), uuid::Uuid::new_v4().simple())
}

impl Sessions {
    /// Starts a session for `who`; returns its id.
    pub(crate) fn start(&self, who: UserRef) -> String {
        let id = random();
        let now = Instant::now();
        let session = Session { who, csrf: random(), started: now, seen: now };
        let mut sessions = self.by_id.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        sessions.retain(|_, s| live(s, now));
        sessions.insert(id.clone(), session);
        id
    }

    /// The live session with this id, marked as seen now.
    pub(crate) fn find(&self, id: &str) -> Option<Session> {
        let now = Instant::now();
        let mut sessions = self.by_id.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        match sessions.get_mut(id) {
            Some(session) if live(session, now) => {
                session.seen = now;
                Some(session.clone())
            }
            Some(_) => {
                sessions.remove(id);
                None
            }
            None => None,
        }
    }

    /// Ends a session.
    pub(crate) fn end(&self, id: &str) {
        self.by_id.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(id);
    }
}

fn live(session: &Session, now: Instant) -> bool {
    now.duration_since(session.seen) < IDLE && now.duration_since(session.started) < LIFETIME
}

/// The session id a request's `Cookie` header carries, if any.
pub(crate) fn cookie_of(headers: &axum::http::HeaderMap) -> Option<String> {
    headers
        .get_all(axum::http::header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE)
        .map(|(_, value)| value.to_owned())
}

/// The `Set-Cookie` value for a session id (`Secure` when the request came over TLS, as a
/// proxy in front says with `X-Forwarded-Proto: https`).
pub(crate) fn set_cookie(id: &str, secure: bool) -> String {
    let secure = if secure { "; Secure" } else { "" };
    format!("{COOKIE}={id}; Path=/panel; HttpOnly; SameSite=Strict{secure}")
}

/// The `Set-Cookie` value that removes the session cookie.
pub(crate) fn clear_cookie() -> String {
    format!("{COOKIE}=; Path=/panel; HttpOnly; SameSite=Strict; Max-Age=0")
}

/// Whether two tokens are equal, comparing every byte.
pub(crate) fn same_token(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_start_find_and_end() {
        let sessions = Sessions::default();
        let who = UserRef::new("t", "alice").unwrap();
        let id = sessions.start(who.clone());
        let found = sessions.find(&id).unwrap();
        assert_eq!(found.who, who);
        assert_eq!(found.csrf.len(), 64);
        assert!(sessions.find("made-up").is_none());
        sessions.end(&id);
        assert!(sessions.find(&id).is_none());
    }

    #[test]
    fn the_cookie_is_read_among_others_and_set_strictly() {
        let mut headers = axum::http::HeaderMap::new();
        headers.insert(axum::http::header::COOKIE, "a=1; mnemo_panel=abc; b=2".parse().unwrap());
        assert_eq!(cookie_of(&headers).as_deref(), Some("abc"));
        let set = set_cookie("abc", true);
        assert!(
            set.contains("HttpOnly") && set.contains("SameSite=Strict") && set.contains("Secure")
        );
        assert!(!set_cookie("abc", false).contains("Secure"));
        assert!(same_token("abc", "abc") && !same_token("abc", "abd") && !same_token("ab", "abc"));
    }
}
