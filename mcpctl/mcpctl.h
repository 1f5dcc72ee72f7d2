/*
 * mcpctl: the control CLI (mcpctl.c) and the stdio bridge (connect.c).
 */
#ifndef MCPS_MCPCTL_H
#define MCPS_MCPCTL_H

/* mcpctl connect [-T token-file] [url]: argv[0] is "connect". */
int	mcpctl_connect(int argc, char **argv);

#endif
