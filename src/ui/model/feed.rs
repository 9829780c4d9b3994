//! What the screen says about the feed itself: the API error line, and the explanations shown
//! while a live feed has no data yet.

use crate::l10n::{tr, trf};
use chrono::{DateTime, Utc};

use super::Dashboard;
use crate::{
    cluster::{FeedError, FeedStatus},
    ui::text,
};

/// The feed's API error, while a live feed fails.
pub(crate) fn feed_error(feed: &FeedStatus) -> Option<&FeedError> {
    match feed {
        FeedStatus::Live { error: Some(e), .. } => Some(e),
        _ => None,
    }
}

/// The API error as one line: since when, for how long, and what failed.
pub(crate) fn feed_error_line(e: &FeedError, now: DateTime<Utc>) -> String {
    trf!(
        "feed-error-line",
        "API unreachable since {since} ({age} ago): {error}",
        since = e.since.format("%Y-%m-%d %H:%M:%S UTC").to_string(),
        age = text::age(Some(e.since), now),
        error = text::one_line(&e.message)
    )
}

/// While a live feed has no data: the long explanation (with the error and since when).
pub(crate) fn waiting_long(dash: &Dashboard, feed: &FeedStatus, now: DateTime<Utc>) -> Option<String> {
    if !dash.no_data {
        return None;
    }
    Some(match feed_error(feed) {
        Some(e) => trf!(
            "feed-waiting-long-error",
            "Cannot reach the API server since {since} ({age} ago): nothing is known about this \
             cluster yet (no data received). Error: {error}",
            since = e.since.format("%Y-%m-%d %H:%M:%S UTC").to_string(),
            age = text::age(Some(e.since), now),
            error = text::one_line(&e.message)
        ),
        None => tr!(
            "feed-waiting-long",
            "No data yet: waiting for the first list of ClusterVersion, ClusterOperators, \
             pools and nodes from the API server."
        )
        .into(),
    })
}

/// While a live feed has no data: the short form for empty tables.
pub(crate) fn waiting_short(dash: &Dashboard, feed: &FeedStatus, now: DateTime<Utc>) -> Option<String> {
    if !dash.no_data {
        return None;
    }
    Some(match feed_error(feed) {
        Some(e) => trf!(
            "feed-waiting-short-error",
            "no data: cannot reach the API server (unreachable since {since}, {age} ago)",
            since = e.since.format("%H:%M:%S UTC").to_string(),
            age = text::age(Some(e.since), now)
        ),
        None => tr!(
            "feed-waiting-short",
            "no data yet: waiting for the API server (syncing…)"
        )
        .into(),
    })
}
