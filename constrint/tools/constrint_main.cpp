// Placeholder: the command-line program is being written.
int main() { return 2; }
