from cxlsim.cli import main

raise SystemExit(main())
