//! Update-health insights: the ClusterVersion Failing insight, alert insights, filtering,
//! sorting and the SINCE column (`openshift/oc pkg/cli/admin/upgrade/status/health.go`,
//! `openshift/oc pkg/cli/admin/upgrade/status/alerts.go`).

use chrono::{DateTime, Utc};

use super::alerts::Alerts;
use super::controlplane::{CV_KIND, REF_DEGRADED};
use super::durations::{SECOND, between, short, trunc};
use super::{Impact, Insight, Level, Resource};
use crate::openshift::{ClusterVersion, ConditionStatus};

/// The ClusterVersion insight: no Failing condition, or Failing ≠ False
/// (`openshift/oc pkg/cli/admin/upgrade/status/controlplane.go` `versionUpdateInsights`).
pub fn cluster_version_insight(cv: &ClusterVersion, now: DateTime<Utc>) -> Option<Insight> {
    let name = cv.metadata.name.clone().unwrap_or_default();
    let resources = vec![Resource {
        kind: CV_KIND.to_owned(),
        name: name.clone(),
    }];
    match cv.condition("Failing") {
        None => Some(Insight {
            started_at: Some(now),
            level: Level::Warning,
            impact: Impact::UpdateStalled,
            summary: format!("Cluster Version {name} has no Failing condition"),
            description: "Current status of Cluster Version reconciliation is unclear.  See 'oc -n \
                          openshift-cluster-version logs -l k8s-app=cluster-version-operator --tail -1' to debug."
                .to_owned(),
            reference: REF_DEGRADED.to_owned(),
            resources,
            ..Default::default()
        }),
        Some(f) if f.status != ConditionStatus::False => {
            let verb = if f.status == ConditionStatus::Unknown { "may be" } else { "is" };
            Some(Insight {
                started_at: f.last_transition_time,
                level: Level::Warning,
                impact: Impact::UpdateStalled,
                summary: format!("Cluster Version {name} {verb} failing to proceed with the update ({})", f.reason()),
                description: f.message().to_owned(),
                reference: REF_DEGRADED.to_owned(),
                resources,
                ..Default::default()
            })
        }
        Some(_) => None,
    }
}

/// Alert insights (`openshift/oc pkg/cli/admin/upgrade/status/alerts.go` `parseAlertDataToInsights`):
/// firing warning/critical alerts that started during the update, plus the allow-listed PDB
/// alerts whenever they fire.
pub fn alert_insights(alerts: &Alerts, started_at: Option<DateTime<Utc>>) -> Vec<Insight> {
    let mut out = Vec::new();
    for a in &alerts.data.alerts {
        let l = &a.labels;
        let an = &a.annotations;
        if l.alertname.is_empty() {
            continue;
        }
        let during = started_at < a.active_at;
        let mut description = if matches!(
            l.alertname.as_str(),
            "PodDisruptionBudgetLimit" | "PodDisruptionBudgetAtLimit"
        ) {
            if during {
                "Alert known to affect updates started firing during the update.".to_owned()
            } else {
                "Alert known to affect updates has been firing since before the update started.".to_owned()
            }
        } else if during {
            "Alert started firing during the update.".to_owned()
        } else {
            continue;
        };
        if a.state == "pending" {
            continue;
        }
        let level = match l.severity.as_str() {
            "warning" => Level::Warning,
            "critical" => Level::Critical,
            _ => continue,
        };
        match (an.description.is_empty(), an.message.is_empty()) {
            (false, false) => {
                description.push_str(&format!(
                    " The alert description is: {} | {}",
                    an.description, an.message
                ));
            }
            (false, true) => description.push_str(&format!(" The alert description is: {}", an.description)),
            (true, false) => description.push_str(&format!(" The alert description is: {}", an.message)),
            (true, true) => description.push_str(" The alert has no description."),
        }
        let summary = if an.summary.is_empty() {
            &l.alertname
        } else {
            &an.summary
        };
        let reference = if an.runbook_url.is_empty() {
            "<alert does not have a runbook_url annotation>".to_owned()
        } else {
            an.runbook_url.clone()
        };
        let name = if l.namespace.is_empty() {
            l.alertname.clone()
        } else {
            format!("{}/{}", l.namespace, l.alertname)
        };
        out.push(Insight {
            started_at: a.active_at,
            level,
            impact: Impact::Unknown,
            summary: format!("Alert is firing: {summary}"),
            description,
            reference,
            resources: vec![Resource {
                kind: "alerts.config.openshift.io".to_owned(),
                name,
            }],
            ..Default::default()
        });
    }
    out
}

/// Filters, sorts and fills in SINCE (`openshift/oc pkg/cli/admin/upgrade/status/health.go`
/// `assessUpdateInsights`). Returns the insights and whether only the default one is left.
pub fn finish(mut insights: Vec<Insight>, now: DateTime<Utc>, updating_for: i64) -> (Vec<Insight>, bool) {
    insights.retain(|i| !i.summary.is_empty() && !i.description.is_empty() && !i.reference.is_empty());
    let default_only = insights.is_empty();
    if default_only {
        let started = now - chrono::Duration::nanoseconds(updating_for);
        insights.push(Insight {
            started_at: Some(started),
            level: Level::Info,
            impact: Impact::None,
            summary: "Update is proceeding well".to_owned(),
            ..Default::default()
        });
    }
    go_sort_slice(&mut insights, |a, b| a.started_at > b.started_at);
    insights.sort_by_key(|i| std::cmp::Reverse(i.level));
    for i in &mut insights {
        i.since = match i.started_at {
            None => "-".to_owned(),
            Some(t) => short(trunc(between(now, t), SECOND)),
        };
    }
    (insights, default_only)
}

/// Go `sort.Slice` (pattern-defeating quicksort, unstable), ported from Go `src/sort/zsortfunc.go`
/// (BSD licence) so that ties among more than 12 elements land where Go puts them.
pub fn go_sort_slice<T>(data: &mut [T], less: impl Fn(&T, &T) -> bool) {
    let n = data.len();
    let limit = usize::BITS - n.leading_zeros();
    let mut s = Sorter { data, less };
    s.pdqsort(0, n, limit);
}

struct Sorter<'a, T, F: Fn(&T, &T) -> bool> {
    data: &'a mut [T],
    less: F,
}

#[derive(PartialEq, Eq, Clone, Copy)]
enum Hint {
    Unknown,
    Increasing,
    Decreasing,
}

impl<T, F: Fn(&T, &T) -> bool> Sorter<'_, T, F> {
    fn less(&self, i: usize, j: usize) -> bool {
        (self.less)(&self.data[i], &self.data[j])
    }
    fn swap(&mut self, i: usize, j: usize) {
        self.data.swap(i, j);
    }

    fn insertion_sort(&mut self, a: usize, b: usize) {
        for i in a + 1..b {
            let mut j = i;
            while j > a && self.less(j, j - 1) {
                self.swap(j, j - 1);
                j -= 1;
            }
        }
    }

    fn sift_down(&mut self, lo: usize, hi: usize, first: usize) {
        let mut root = lo;
        loop {
            let mut child = 2 * root + 1;
            if child >= hi {
                return;
            }
            if child + 1 < hi && self.less(first + child, first + child + 1) {
                child += 1;
            }
            if !self.less(first + root, first + child) {
                return;
            }
            self.swap(first + root, first + child);
            root = child;
        }
    }

    fn heap_sort(&mut self, a: usize, b: usize) {
        let first = a;
        let hi = b - a;
        let mut i = (hi as isize - 1) / 2;
        while i >= 0 {
            self.sift_down(i as usize, hi, first);
            i -= 1;
        }
        let mut i = hi as isize - 1;
        while i >= 0 {
            self.swap(first, first + i as usize);
            self.sift_down(0, i as usize, first);
            i -= 1;
        }
    }

    fn pdqsort(&mut self, mut a: usize, mut b: usize, mut limit: u32) {
        const MAX_INSERTION: usize = 12;
        let mut was_balanced = true;
        let mut was_partitioned = true;
        loop {
            let length = b - a;
            if length <= MAX_INSERTION {
                self.insertion_sort(a, b);
                return;
            }
            if limit == 0 {
                self.heap_sort(a, b);
                return;
            }
            if !was_balanced {
                self.break_patterns(a, b);
                limit -= 1;
            }
            let (mut pivot, mut hint) = self.choose_pivot(a, b);
            if hint == Hint::Decreasing {
                self.reverse_range(a, b);
                pivot = (b - 1) - (pivot - a);
                hint = Hint::Increasing;
            }
            if was_balanced
                && was_partitioned
                && hint == Hint::Increasing
                && self.partial_insertion_sort(a, b)
            {
                return;
            }
            if a > 0 && !self.less(a - 1, pivot) {
                let mid = self.partition_equal(a, b, pivot);
                a = mid;
                continue;
            }
            let (mid, already) = self.partition(a, b, pivot);
            was_partitioned = already;
            let (left, right) = (mid - a, b - mid);
            let threshold = length / 8;
            if left < right {
                was_balanced = left >= threshold;
                self.pdqsort(a, mid, limit);
                a = mid + 1;
            } else {
                was_balanced = right >= threshold;
                self.pdqsort(mid + 1, b, limit);
                b = mid;
            }
        }
    }

    fn partition(&mut self, a: usize, b: usize, pivot: usize) -> (usize, bool) {
        self.swap(a, pivot);
        let (mut i, mut j) = (a as isize + 1, b as isize - 1);
        while i <= j && self.less(i as usize, a) {
            i += 1;
        }
        while i <= j && !self.less(j as usize, a) {
            j -= 1;
        }
        if i > j {
            self.swap(j as usize, a);
            return (j as usize, true);
        }
        self.swap(i as usize, j as usize);
        i += 1;
        j -= 1;
        loop {
            while i <= j && self.less(i as usize, a) {
                i += 1;
            }
            while i <= j && !self.less(j as usize, a) {
                j -= 1;
            }
            if i > j {
                break;
            }
            self.swap(i as usize, j as usize);
            i += 1;
            j -= 1;
        }
        self.swap(j as usize, a);
        (j as usize, false)
    }

    fn partition_equal(&mut self, a: usize, b: usize, pivot: usize) -> usize {
        self.swap(a, pivot);
        let (mut i, mut j) = (a as isize + 1, b as isize - 1);
        loop {
            while i <= j && !self.less(a, i as usize) {
                i += 1;
            }
            while i <= j && self.less(a, j as usize) {
                j -= 1;
            }
            if i > j {
                break;
            }
            self.swap(i as usize, j as usize);
            i += 1;
            j -= 1;
        }
        i as usize
    }

    fn partial_insertion_sort(&mut self, a: usize, b: usize) -> bool {
        const MAX_STEPS: usize = 5;
        const SHORTEST_SHIFTING: usize = 50;
        let mut i = a + 1;
        for _ in 0..MAX_STEPS {
            while i < b && !self.less(i, i - 1) {
                i += 1;
            }
            if i == b {
                return true;
            }
            if b - a < SHORTEST_SHIFTING {
                return false;
            }
            self.swap(i, i - 1);
            if i - a >= 2 {
                let mut j = i - 1;
                while j >= 1 {
                    if !self.less(j, j - 1) {
                        break;
                    }
                    self.swap(j, j - 1);
                    j -= 1;
                }
            }
            if b - i >= 2 {
                let mut j = i + 1;
                while j < b {
                    if !self.less(j, j - 1) {
                        break;
                    }
                    self.swap(j, j - 1);
                    j += 1;
                }
            }
        }
        false
    }

    fn break_patterns(&mut self, a: usize, b: usize) {
        let length = b - a;
        if length >= 8 {
            let mut random = length as u64;
            let modulus = 1u64 << (u64::BITS - (length as u64).leading_zeros());
            let idx = a + (length / 4) * 2 - 1;
            for i in 0..3 {
                random ^= random << 13;
                random ^= random >> 7;
                random ^= random << 17;
                let mut other = (random & (modulus - 1)) as usize;
                if other >= length {
                    other -= length;
                }
                self.swap(idx + i, a + other);
            }
        }
    }

    fn choose_pivot(&mut self, a: usize, b: usize) -> (usize, Hint) {
        const SHORTEST_NINTHER: usize = 50;
        const MAX_SWAPS: usize = 4 * 3;
        let l = b - a;
        let mut swaps = 0usize;
        let mut i = a + l / 4;
        let mut j = a + l / 4 * 2;
        let mut k = a + l / 4 * 3;
        if l >= 8 {
            if l >= SHORTEST_NINTHER {
                i = self.median_adjacent(i, &mut swaps);
                j = self.median_adjacent(j, &mut swaps);
                k = self.median_adjacent(k, &mut swaps);
            }
            j = self.median(i, j, k, &mut swaps);
        }
        match swaps {
            0 => (j, Hint::Increasing),
            MAX_SWAPS => (j, Hint::Decreasing),
            _ => (j, Hint::Unknown),
        }
    }

    fn order2(&self, a: usize, b: usize, swaps: &mut usize) -> (usize, usize) {
        if self.less(b, a) {
            *swaps += 1;
            (b, a)
        } else {
            (a, b)
        }
    }

    fn median(&self, a: usize, b: usize, c: usize, swaps: &mut usize) -> usize {
        let (a, b) = self.order2(a, b, swaps);
        let (b, c) = self.order2(b, c, swaps);
        let _ = c;
        let (_a, b) = self.order2(a, b, swaps);
        b
    }

    fn median_adjacent(&self, a: usize, swaps: &mut usize) -> usize {
        self.median(a - 1, a, a + 1, swaps)
    }

    fn reverse_range(&mut self, a: usize, b: usize) {
        let (mut i, mut j) = (a, b - 1);
        while i < j {
            self.swap(i, j);
            i += 1;
            j -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_sort_sorts() {
        let mut v: Vec<i64> = (0..200).map(|i| (i * 7919) % 101).collect();
        go_sort_slice(&mut v, |a, b| a < b);
        assert!(v.windows(2).all(|w| w[0] <= w[1]));
        let mut small = vec![3, 1, 2];
        go_sort_slice(&mut small, |a, b| a < b);
        assert_eq!(small, vec![1, 2, 3]);
    }
}
