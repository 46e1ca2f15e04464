package garmd

// BusEventHandlers are the options that log what happens to garmd's bus
// connection.
var BusEventHandlers = busEventHandlers
