//! The pull-spec check of a target the update service listed (issue 26 point 3).

use serde_json::json;

use super::*;

/// A target the update service listed gets `--to-image`'s pull-spec check: `--to`,
/// `--to-latest` and a picked row (version and image) alike.
#[test]
fn a_listed_target_is_checked_as_a_pull_spec_by_digest() {
    let requests = |v: &str, image: &str| {
        [
            to(v),
            Request::ToLatest,
            Request::ToVersion {
                version: v.into(),
                image: Some(image.into()),
            },
        ]
    };
    let all_flags = Flags {
        force: true,
        allow_explicit_upgrade: true,
        allow_not_recommended: true,
        allow_upgrade_with_warnings: true,
        accept_risks_gate: true,
        allow_explicit_channel: true,
    };
    // file://, another scheme, a local path, no pull spec: refused whatever the flags.
    for (image, want) in [
        (
            "file:///tmp/payload",
            "the update service lists 4.18.0 with release image \"file:///tmp/payload\", which is a file:// location and not a registry pull spec; refusing it",
        ),
        (
            "https://evil.example.com/release.tar",
            "the update service lists 4.18.0 with release image \"https://evil.example.com/release.tar\", which is a https:// location and not a registry pull spec; refusing it",
        ),
        (
            "/var/lib/payload",
            "the update service lists 4.18.0 with release image \"/var/lib/payload\", which is a local path and not a registry pull spec; refusing it",
        ),
        (
            "release",
            "the update service lists 4.18.0 with release image \"release\", which is not a valid pull spec (no registry or repository specified); refusing it",
        ),
    ] {
        let mut cv = cluster();
        cv.status.available_updates = Some(vec![rel("4.16.4", IMG_A), rel("4.18.0", image)]);
        cv.status
            .conditions
            .push(cond("Upgradeable", ConditionStatus::True, "", ""));
        for req in requests("4.18.0", image) {
            for flags in [Flags::default(), all_flags] {
                let r = refused(&cv, &req, &flags);
                assert_eq!((r.precondition, r.waiver), ("PullSpec", None), "{req:?} {image}");
                assert_eq!(r.message, want, "{req:?}");
            }
        }
    }
    // By tag: only with --force, as --to-image.
    let tagged = "quay.io/openshift-release-dev/ocp-release:4.16.9-x86_64";
    let mut cv = cluster();
    cv.status.available_updates = Some(vec![rel("4.16.9", tagged)]);
    for req in requests("4.16.9", tagged) {
        let r = refused(&cv, &req, &Flags::default());
        assert_eq!(
            (r.precondition, r.waiver),
            ("PullSpec", Some(Waiver::Force)),
            "{req:?}"
        );
        assert!(
            r.message.starts_with(&format!(
                "the update service lists 4.16.9 with release image {tagged}, which is not a by-digest pull spec; it is accepted only with --force"
            )),
            "{}",
            r.message
        );
        let forced = Flags {
            force: true,
            ..Flags::default()
        };
        let p = planned(&cv, &req, &forced);
        assert_eq!(
            verdict(&p.verdicts, "PullSpec").state,
            VerdictState::Waived(Waiver::Force)
        );
        assert_eq!(
            p.patch,
            json!({"spec": {"desiredUpdate": {"version": "4.16.9", "image": tagged, "force": true}}})
        );
    }
    // By digest: passed.
    let p = planned(&cluster(), &to("4.16.4"), &Flags::default());
    assert_eq!(
        verdict(&p.verdicts, "PullSpec").message,
        format!("{IMG_A} is a by-digest pull spec")
    );
}

/// A conditional update the update service lists with a local path is refused even with
/// `--allow-not-recommended`.
#[test]
fn a_not_recommended_target_with_a_local_image_is_refused() {
    let mut cv = cluster();
    cv.status.conditional_updates[0].release = rel("4.16.5", "file:///etc/cvo/payload");
    let flags = Flags {
        allow_not_recommended: true,
        force: true,
        ..Flags::default()
    };
    let r = refused(&cv, &to("4.16.5"), &flags);
    assert_eq!((r.precondition, r.waiver), ("PullSpec", None));
    assert!(
        r.message
            .contains("\"file:///etc/cvo/payload\", which is a file:// location"),
        "{}",
        r.message
    );
}

/// `--to-image` with a `file://` location or a local path is refused whatever the flags.
#[test]
fn to_image_refuses_a_local_location() {
    let flags = Flags {
        force: true,
        allow_explicit_upgrade: true,
        ..Flags::default()
    };
    for (image, want) in [
        (
            "file:///tmp/p",
            "--to-image must be a registry pull spec, not a file:// location: file:///tmp/p",
        ),
        (
            "./p",
            "--to-image must be a registry pull spec, not a local path: ./p",
        ),
    ] {
        let r = refused(
            &cluster(),
            &Request::ToImage {
                pullspec: image.into(),
            },
            &flags,
        );
        assert_eq!(
            (r.precondition, r.waiver, r.message.as_str()),
            ("PullSpec", None, want)
        );
    }
}
