/* npreport dump FILE...: any .npr/.npa as JSON lines, one record per line. */
#ifndef NP_DUMP_H
#define NP_DUMP_H

/* argv[0] is "dump". Returns the exit status: 0 read fully, 1 damage was
 * skipped, 2 usage or open error. */
int dump_main(int argc, char **argv);

#endif
