package main

import (
	"flag"
	"strconv"

	"github.com/csi-node-proxy/csi-node-proxy/groups/system"
)

// biosSerialOutput is "system bios-serial -o json".
type biosSerialOutput struct {
	SerialNumber string `json:"serial_number" doc:"the serial number the BIOS reports"`
}

// serviceOutput is "system service -o json", and what start-service and
// stop-service print.
type serviceOutput struct {
	Name        string `json:"name" doc:"the service's key name, as asked for"`
	DisplayName string `json:"display_name" doc:"the service's display name; empty for start-service and stop-service"`
	StartType   string `json:"start_type" doc:"BOOT, SYSTEM, AUTOMATIC, MANUAL or DISABLED; empty for start-service and stop-service"`
	Status      string `json:"status" doc:"STOPPED, START_PENDING, STOP_PENDING, RUNNING, CONTINUE_PENDING, PAUSE_PENDING, PAUSED or UNKNOWN; RUNNING after start-service, STOPPED after stop-service"`
}

// statusNames are the wire enum's names of the service states.
var statusNames = map[system.ServiceStatus]string{
	system.StatusUnknown:         "UNKNOWN",
	system.StatusStopped:         "STOPPED",
	system.StatusStartPending:    "START_PENDING",
	system.StatusStopPending:     "STOP_PENDING",
	system.StatusRunning:         "RUNNING",
	system.StatusContinuePending: "CONTINUE_PENDING",
	system.StatusPausePending:    "PAUSE_PENDING",
	system.StatusPaused:          "PAUSED",
}

// startTypeNames are the wire enum's names of the start types.
var startTypeNames = map[system.StartType]string{
	system.StartBoot:      "BOOT",
	system.StartSystem:    "SYSTEM",
	system.StartAutomatic: "AUTOMATIC",
	system.StartManual:    "MANUAL",
	system.StartDisabled:  "DISABLED",
}

// enumName names an enum value, or its number if a newer proxy sends one
// this CLI does not know.
func enumName[K ~int32](names map[K]string, v K) string {
	if s, ok := names[v]; ok {
		return s
	}
	return strconv.Itoa(int(v))
}

var serviceArg = argSpec{name: "NAME", help: "the service's key name (W32Time, kubelet.service)", check: checkService}

// systemCommands are the system group's commands.
func systemCommands() []command {
	return []command{
		{
			group: "system", name: "bios-serial",
			summary: "Show the BIOS serial number",
			about:   `Calls GetBIOSSerialNumber.`,
			example: `csi-node-proxyctl system bios-serial -o json | jq -r .serial_number`,
			output:  biosSerialOutput{},
			flags:   noFlags(runBIOSSerial),
		},
		{
			group: "system", name: "service", args: []argSpec{serviceArg},
			summary: "Show a service's display name, start type and state",
			about:   `Calls GetService. Any service can be read; only allowed ones can be changed.`,
			example: `csi-node-proxyctl system service W32Time`,
			exits:   []int{exitNotFound, exitInvalid},
			output:  serviceOutput{},
			flags:   noFlags(runGetService),
		},
		{
			group: "system", name: "start-service", args: []argSpec{serviceArg},
			summary: "Start a service", mutating: true,
			about: `Calls StartService. Only services the daemon allows (--allowed-service) may
be started; others are refused (exit 4, permission denied). A running
service is success.`,
			example: `csi-node-proxyctl system start-service MSiSCSI --yes`,
			exits:   []int{exitNotFound, exitInvalid},
			output:  serviceOutput{},
			flags:   noFlags(func(c *call) (*view, error) { return runServiceChange(c, true, false) }),
		},
		{
			group: "system", name: "stop-service", args: []argSpec{serviceArg},
			summary: "Stop a service", mutating: true,
			about: `Calls StopService. Only services the daemon allows (--allowed-service) may
be stopped; others are refused (exit 4, permission denied). With --force the
services that depend on it are stopped too. A stopped service is success.`,
			example: `csi-node-proxyctl system stop-service MSiSCSI --yes`,
			exits:   []int{exitNotFound, exitInvalid},
			output:  serviceOutput{},
			flags: func(fs *flag.FlagSet) runFunc {
				force := fs.Bool("force", false, "Also stop the services that depend on this one")
				return func(c *call) (*view, error) { return runServiceChange(c, false, *force) }
			},
		},
	}
}

func runBIOSSerial(c *call) (*view, error) {
	n, err := c.connect()
	if err != nil {
		return nil, err
	}
	r, err := n.System().GetBIOSSerialNumber(c.ctx, &system.GetBIOSSerialNumberRequest{})
	if err != nil {
		return nil, err
	}
	return &view{json: biosSerialOutput{SerialNumber: r.SerialNumber}, header: []string{"SERIAL"}, rows: [][]string{{orDash(r.SerialNumber)}}}, nil
}

func runGetService(c *call) (*view, error) {
	name := c.args[0]
	n, err := c.connect()
	if err != nil {
		return nil, err
	}
	r, err := n.System().GetService(c.ctx, &system.GetServiceRequest{Name: name})
	if err != nil {
		return nil, err
	}
	out := serviceOutput{Name: name, DisplayName: r.DisplayName, StartType: enumName(startTypeNames, r.StartType), Status: enumName(statusNames, r.Status)}
	return &view{
		json:   out,
		header: []string{"NAME", "DISPLAY NAME", "START TYPE", "STATUS"},
		rows:   [][]string{{name, orDash(out.DisplayName), out.StartType, out.Status}},
	}, nil
}

func runServiceChange(c *call, start, force bool) (*view, error) {
	name := c.args[0]
	what := "start the service " + name
	if !start {
		what = "stop the service " + name
		if force {
			what += " and the services that depend on it"
		}
	}
	n, err := c.confirmConnect(what)
	if err != nil {
		return nil, err
	}
	if start {
		if _, err := n.System().StartService(c.ctx, &system.StartServiceRequest{Name: name}); err != nil {
			return nil, err
		}
		return &view{json: serviceOutput{Name: name, Status: "RUNNING"}, message: "service " + name + " is running"}, nil
	}
	if _, err := n.System().StopService(c.ctx, &system.StopServiceRequest{Name: name, Force: force}); err != nil {
		return nil, err
	}
	return &view{json: serviceOutput{Name: name, Status: "STOPPED"}, message: "service " + name + " is stopped"}, nil
}
