//! API types of the OpenShift kinds cvo reads and writes.
//!
//! Field names follow `openshift/api` exactly (`config/v1/types_cluster_version.go`,
//! `config/v1/types_cluster_operator.go`, `machineconfiguration/v1/types.go`). Every field of the
//! CRDs in `openshift/api` (`config/v1/zz_generated.crd-manifests/`) is present; every field is
//! optional on decode and unknown fields are ignored, so objects written by newer or older
//! servers still decode.

pub mod condition;
pub mod config_v1;
pub mod feature_gate;
mod go_text;
pub mod machineconfiguration_v1;
pub mod mask;
pub mod precondition;

pub use condition::{Condition, ConditionStatus};
pub use config_v1::*;
pub use feature_gate::FeatureGate;
pub use go_text::go_quote;
pub use machineconfiguration_v1::*;

/// Implements `k8s_openapi::Resource` + `Metadata` (and so `kube::Resource`) for a type with a
/// `metadata: ObjectMeta` field.
macro_rules! openshift_resource {
    ($ty:ty, $group:literal, $version:literal, $kind:literal, $plural:literal, $scope:ty) => {
        impl k8s_openapi::Resource for $ty {
            const API_VERSION: &'static str = concat!($group, "/", $version);
            const GROUP: &'static str = $group;
            const KIND: &'static str = $kind;
            const VERSION: &'static str = $version;
            const URL_PATH_SEGMENT: &'static str = $plural;
            type Scope = $scope;
        }
        impl k8s_openapi::Metadata for $ty {
            type Ty = k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
            fn metadata(&self) -> &Self::Ty {
                &self.metadata
            }
            fn metadata_mut(&mut self) -> &mut Self::Ty {
                &mut self.metadata
            }
        }
        impl k8s_openapi::ListableResource for $ty {
            const LIST_KIND: &'static str = concat!($kind, "List");
        }
    };
}
pub(crate) use openshift_resource;

/// Implements `Serialize` for a resource type with `apiVersion` and `kind` first (from its
/// `k8s_openapi::Resource` constants), then the named fields: kube-apiserver rejects a body
/// without them (`400 Bad Request`), as the Go types' `TypeMeta` always carries them.
macro_rules! serialize_with_type_meta {
    ($ty:ty, $($field:ident),+) => {
        impl serde::Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                use serde::ser::SerializeStruct;
                let n = 2 + [$(stringify!($field)),+].len();
                let mut st = s.serialize_struct(stringify!($ty), n)?;
                st.serialize_field("apiVersion", <$ty as k8s_openapi::Resource>::API_VERSION)?;
                st.serialize_field("kind", <$ty as k8s_openapi::Resource>::KIND)?;
                $(st.serialize_field(stringify!($field), &self.$field)?;)+
                st.end()
            }
        }
    };
}
pub(crate) use serialize_with_type_meta;

/// Converts a k8s-openapi (jiff) timestamp into chrono's `DateTime<Utc>`.
pub fn time_to_chrono(
    t: &k8s_openapi::apimachinery::pkg::apis::meta::v1::Time,
) -> chrono::DateTime<chrono::Utc> {
    let secs = t.0.as_second();
    let nanos = u32::try_from(t.0.subsec_nanosecond()).unwrap_or(0);
    chrono::DateTime::from_timestamp(secs, nanos).unwrap_or_default()
}
