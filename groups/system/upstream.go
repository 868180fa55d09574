package system

// Upstream v2's names of the service states and start types (KEP-3636;
// kubernetes-csi/csi-proxy branch library-development at e776c65,
// pkg/system/types.go), for drivers that move from pkg/system by changing
// the import: the same values as the constants above.
// The ALL_CAPS names are upstream's, kept on purpose.
const (
	// SERVICE_STATUS_UNKNOWN is StatusUnknown.
	SERVICE_STATUS_UNKNOWN = StatusUnknown
	// SERVICE_STATUS_STOPPED is StatusStopped.
	SERVICE_STATUS_STOPPED = StatusStopped
	// SERVICE_STATUS_START_PENDING is StatusStartPending.
	SERVICE_STATUS_START_PENDING = StatusStartPending
	// SERVICE_STATUS_STOP_PENDING is StatusStopPending.
	SERVICE_STATUS_STOP_PENDING = StatusStopPending
	// SERVICE_STATUS_RUNNING is StatusRunning.
	SERVICE_STATUS_RUNNING = StatusRunning
	// SERVICE_STATUS_CONTINUE_PENDING is StatusContinuePending.
	SERVICE_STATUS_CONTINUE_PENDING = StatusContinuePending
	// SERVICE_STATUS_PAUSE_PENDING is StatusPausePending.
	SERVICE_STATUS_PAUSE_PENDING = StatusPausePending
	// SERVICE_STATUS_PAUSED is StatusPaused.
	SERVICE_STATUS_PAUSED = StatusPaused

	// START_TYPE_BOOT is StartBoot.
	START_TYPE_BOOT = StartBoot
	// START_TYPE_SYSTEM is StartSystem.
	START_TYPE_SYSTEM = StartSystem
	// START_TYPE_AUTOMATIC is StartAutomatic.
	START_TYPE_AUTOMATIC = StartAutomatic
	// START_TYPE_MANUAL is StartManual.
	START_TYPE_MANUAL = StartManual
	// START_TYPE_DISABLED is StartDisabled.
	START_TYPE_DISABLED = StartDisabled
)
