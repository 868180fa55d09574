package iscsi

// Upstream v2's names of the authentication types (KEP-3636;
// kubernetes-csi/csi-proxy branch library-development at e776c65,
// pkg/iscsi/types.go), for drivers that move from pkg/iscsi by changing
// the import. Upstream declares them untyped; these are the typed
// constants above under upstream's names, so they assign to
// ConnectTargetRequest.AuthType alike.
// The ALL_CAPS names are upstream's, kept on purpose.
const (
	// NONE is AuthNone.
	NONE = AuthNone
	// ONE_WAY_CHAP is AuthOneWayCHAP.
	ONE_WAY_CHAP = AuthOneWayCHAP
	// MUTUAL_CHAP is AuthMutualCHAP.
	MUTUAL_CHAP = AuthMutualCHAP
)
