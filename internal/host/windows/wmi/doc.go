// Package wmi is the project's small door to Windows Management
// Instrumentation: WQL queries and method calls over the WMI scripting API
// (WbemScripting.SWbemLocator, IDispatch through go-ole), with every value
// that reaches a query escaped in one place and every result code mapped to
// an errdefs kind.
//
// The Windows backends use it only where Win32 has no equivalent, for
// example the Storage Management API classes MSFT_Disk, MSFT_Partition,
// MSFT_Volume and MSFT_StorageSetting in Root\Microsoft\Windows\Storage.
//
// What is platform-neutral, and therefore unit-tested on Linux: the WQL
// builder (Query, Literal), decoding of property values as scripting
// automation delivers them (Props), encoding of method parameters (Arg),
// and the mapping of Storage Management return codes (ReturnCode,
// MethodError) and COM/WBEM HRESULTs (COMError) to errdefs kinds.
//
// What is Windows-only: Client, which runs each operation in its own COM
// scope on a locked OS thread (CoInitializeEx(COINIT_MULTITHREADED) per
// call, ConnectServer per call). Nothing happens at package initialisation:
// a process that never calls WMI never touches COM, so a host without WMI
// scripting registered (kubernetes-csi/csi-proxy#411) fails one call with
// an error instead of panicking at start-up. On other systems Client
// reports errdefs.ErrUnimplemented.
package wmi
